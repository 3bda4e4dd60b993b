import Foundation
import Testing
import TouchstoneStore
import TouchstoneTesting

/// A store that forwards every call to another, and can play a concurrent attempt that wins a race: armed with
/// ``loseNextRace()``, the next write that answers a sign-in challenge (a completing write, or the recording of a
/// failed attempt; biometric or passkey) is preceded by the recording of the same challenge, as another request
/// answering it between this attempt's read and its write would have done. The server's lost-race branches are then
/// reached deterministically instead of by timing. It is a ``ChallengeLedger`` and a ``PasskeyStore`` only: ``store``
/// puts it in a ``ComposedStore`` whose other aggregates are the inner store's.
final class RacingStore: ChallengeLedger, PasskeyStore, @unchecked Sendable {
    let inner: any TouchstoneStore
    private let lock = NSLock()
    private var armed = false
    private var lost = 0

    /// How many races this store has made its caller lose.
    var racesLost: Int { self.lock.withLock { self.lost } }

    init(_ inner: any TouchstoneStore) {
        self.inner = inner
    }

    /// The store to hand the server: the inner one, with this racing ledger and passkey store in place of its own.
    var store: ComposedStore {
        var store = ComposedStore(self.inner)
        store.challenges = self
        store.passkeyStore = self
        return store
    }

    /// The next write that answers a sign-in challenge finds it answered already.
    func loseNextRace() {
        self.lock.withLock { self.armed = true }
    }

    private func takeRace() -> Bool {
        self.lock.withLock {
            defer { self.armed = false }
            if self.armed { self.lost += 1 }
            return self.armed
        }
    }

    /// The competitor: records the challenge as answered (for a biometric challenge, as the winning attempt's own
    /// write does; a passkey challenge alike).
    private func competitor(_ challenge: ChallengeRecord, at: Date) async throws {
        if self.takeRace() { #expect(try await self.inner.recordAnsweredChallenge(challenge, at: at)) }
    }

    private func competitor(_ challenge: WebAuthnChallengeRecord, at: Date) async throws {
        if self.takeRace() { #expect(try await self.inner.recordAnsweredWebAuthnChallenge(challenge, at: at)) }
    }

    func recordAnsweredChallenge(_ challenge: ChallengeRecord, at: Date) async throws -> Bool {
        try await self.competitor(challenge, at: at)
        return try await self.inner.recordAnsweredChallenge(challenge, at: at)
    }

    func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, events: [AuditEventRecord], at: Date)
        async throws -> UserRecord?
    {
        try await self.competitor(challenge, at: at)
        return try await self.inner.completeSignIn(challenge: challenge, session: session, events: events, at: at)
    }

    func recordAnsweredWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord, at: Date) async throws -> Bool {
        try await self.competitor(challenge, at: at)
        return try await self.inner.recordAnsweredWebAuthnChallenge(challenge, at: at)
    }

    func completePasskeySignIn(
        challenge: WebAuthnChallengeRecord,
        passkeyId: String,
        signCount: Int64,
        backupEligible: Bool,
        backedUp: Bool,
        cloneWarning: Bool,
        session: SessionRecord,
        events: [AuditEventRecord],
        at: Date
    ) async throws -> Bool {
        try await self.competitor(challenge, at: at)
        return try await self.inner.completePasskeySignIn(
            challenge: challenge,
            passkeyId: passkeyId,
            signCount: signCount,
            backupEligible: backupEligible,
            backedUp: backedUp,
            cloneWarning: cloneWarning,
            session: session,
            events: events,
            at: at
        )
    }

    // MARK: Forwarded as they are

    func insertChallenge(_ challenge: ChallengeRecord) async throws { try await self.inner.insertChallenge(challenge) }
    func consumeLatestChallenge(registrationId: String, purpose: ChallengePurpose, at: Date) async throws -> ChallengeRecord? {
        try await self.inner.consumeLatestChallenge(registrationId: registrationId, purpose: purpose, at: at)
    }
    func insertPasskey(_ passkey: PasskeyRecord) async throws { try await self.inner.insertPasskey(passkey) }
    func passkey(id: String) async throws -> PasskeyRecord? { try await self.inner.passkey(id: id) }
    func passkey(credentialId: String) async throws -> PasskeyRecord? {
        try await self.inner.passkey(credentialId: credentialId)
    }
    func passkeySignInAttempt(credentialId: String, challenge: String) async throws -> PasskeySignInAttemptRecord? {
        try await self.inner.passkeySignInAttempt(credentialId: credentialId, challenge: challenge)
    }
    func passkeys(userId: String) async throws -> [PasskeyRecord] { try await self.inner.passkeys(userId: userId) }
    func passkeys(aaguids: [String], attestationKeyIds: [String], limit: Int) async throws -> [PasskeyRecord] {
        try await self.inner.passkeys(aaguids: aaguids, attestationKeyIds: attestationKeyIds, limit: limit)
    }
    func renamePasskey(id: String, userId: String, name: String?) async throws -> Bool {
        try await self.inner.renamePasskey(id: id, userId: userId, name: name)
    }
    func deletePasskey(id: String, userId: String) async throws -> Bool {
        try await self.inner.deletePasskey(id: id, userId: userId)
    }
    func recordPasskeyUse(id: String, signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, at: Date) async throws {
        try await self.inner.recordPasskeyUse(id: id, signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, at: at)
    }
    func insertWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord) async throws {
        try await self.inner.insertWebAuthnChallenge(challenge)
    }
    func recordFailedPasskeyAssertion(id: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.inner.recordFailedPasskeyAssertion(id: id, threshold: threshold, at: at)
    }
    func unlockPasskey(id: String, userId: String) async throws -> Bool {
        try await self.inner.unlockPasskey(id: id, userId: userId)
    }
    func consumeWebAuthnChallenge(_ challenge: String, purpose: ChallengePurpose, at: Date) async throws -> WebAuthnChallengeRecord? {
        try await self.inner.consumeWebAuthnChallenge(challenge, purpose: purpose, at: at)
    }
}
