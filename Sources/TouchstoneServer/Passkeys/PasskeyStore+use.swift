import Foundation
import TouchstoneStore
import TouchstoneWebAuthn

extension PasskeyStore {
    /// Records what a verified assertion tells of its passkey (the counter, the backup flags, a clone warning, the
    /// time), in the caller's unit of work: the way every ceremony that uses a passkey outside sign-in records it.
    func recordUse(of passkeyId: String, _ verified: VerifiedAuthentication, at now: Date) async throws {
        try await self.recordPasskeyUse(
            id: passkeyId,
            signCount: Int64(verified.newSignCount),
            backupEligible: verified.backupEligible,
            backedUp: verified.backupState,
            cloneWarning: verified.cloneWarning,
            at: now
        )
    }
}
