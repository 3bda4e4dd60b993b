public import Foundation

/// Passkeys (WebAuthn credentials): registration, what a sign-in reads, their use, lockout and management.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol PasskeyStore: Sendable {
    /// Inserts a passkey. Throws ``StoreError/conflict(_:)`` when the credential id is already registered.
    func insertPasskey(_ passkey: PasskeyRecord) async throws
    func passkey(id: String) async throws -> PasskeyRecord?
    func passkey(credentialId: String) async throws -> PasskeyRecord?

    /// What finishing a passkey sign-in reads, together (one statement, one snapshot): the passkey with this credential
    /// id, its user, and whether the WebAuthn challenge with this value has been answered (recorded) already. `nil`: no
    /// such passkey.
    func passkeySignInAttempt(credentialId: String, challenge: String) async throws -> PasskeySignInAttemptRecord?

    /// A user's passkeys, newest first.
    func passkeys(userId: String) async throws -> [PasskeyRecord]

    /// Passkeys of the authenticator models named by AAGUID or attestation key identifier, newest first (at most
    /// `limit`): what a status report about those models concerns.
    func passkeys(aaguids: [String], attestationKeyIds: [String], limit: Int) async throws -> [PasskeyRecord]

    /// Renames a passkey of `userId`; returns whether it existed.
    func renamePasskey(id: String, userId: String, name: String?) async throws -> Bool

    /// Deletes a passkey of `userId`; returns whether it existed.
    func deletePasskey(id: String, userId: String) async throws -> Bool

    /// Records a successful assertion atomically: the counter only ever grows (concurrent updates keep the largest),
    /// and a clone warning increments the warning count.
    func recordPasskeyUse(id: String, signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, at: Date) async throws

    /// Counts a failed assertion of an unlocked passkey and locks it when the count reaches `threshold`, atomically;
    /// returns whether it is locked now.
    func recordFailedPasskeyAssertion(id: String, threshold: Int64, at: Date) async throws -> Bool

    /// Unlocks a locked passkey of `userId` and clears its count; returns whether it was locked.
    func unlockPasskey(id: String, userId: String) async throws -> Bool

    /// Completes a passkey sign-in atomically: records the challenge as answered (consumed at `at`) unless a challenge
    /// with its value is stored already and, only if this call recorded it, records the passkey's use (as
    /// ``recordPasskeyUse(id:signCount:backupEligible:backedUp:cloneWarning:at:)``) and stores `session` and `events`.
    ///
    /// - Returns: Whether this call recorded the challenge (`false`: someone else answered it first; nothing was
    ///   written).
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
    ) async throws -> Bool
}
