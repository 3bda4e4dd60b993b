public import Foundation

/// Everything Touchstone persists, behind one protocol.
///
/// Implementations must give every method the same semantics: in particular ``recordAnsweredChallenge(_:at:)``,
/// ``completeSignIn(challenge:session:events:at:)`` and ``consumeLatestChallenge(registrationId:purpose:at:)`` succeed
/// at most once per challenge, however many callers race, and ``activateRegistration(id:replacing:at:)`` is atomic.
public protocol TouchstoneStore: Sendable {
    /// Brings the schema up to date. Safe to call on every start.
    func migrate() async throws
    /// Succeeds when the database answers a trivial query; throws ``StoreError/unavailable(_:)`` otherwise.
    func checkHealth() async throws
    /// Closes connections. The store is unusable afterwards.
    func shutdown() async throws

    // MARK: Users

    /// Inserts a user. Throws ``StoreError/conflict(_:)`` when the email is taken.
    func insertUser(_ user: UserRecord) async throws
    func user(id: String) async throws -> UserRecord?
    /// Looks a user up by normalised email.
    func user(email: String) async throws -> UserRecord?

    // MARK: Sessions

    func insertSession(_ session: SessionRecord) async throws
    func session(tokenHash: String) async throws -> SessionRecord?
    /// Moves a session's idle deadline.
    func updateSessionIdleExpiry(tokenHash: String, idleExpiresAt: Date) async throws
    /// Revokes a session; returns whether a live session was revoked.
    @discardableResult
    func revokeSession(tokenHash: String, at: Date) async throws -> Bool

    // MARK: Registrations

    /// Inserts a registration (normally ``RegistrationStatus/pending``).
    func insertRegistration(_ registration: RegistrationRecord) async throws
    func registration(id: String) async throws -> RegistrationRecord?
    /// What a biometric sign-in's start reads of a registration: its status, and the user and key its finish verifies
    /// with. `nil`: no such registration.
    func signInRegistration(id: String) async throws -> SignInRegistrationRecord?
    /// What finishing a biometric sign-in needs to read, read together (one statement, one snapshot): the registration,
    /// its user and whether the challenge with this value has been answered (recorded) already. `nil`: no such
    /// registration.
    func signInAttempt(registrationId: String, challenge: String) async throws -> SignInAttemptRecord?
    /// The newest non-pending registration of the key with this fingerprint.
    func latestRegistration(keyFingerprint: String) async throws -> RegistrationRecord?
    /// The active registration on a device, whoever it belongs to.
    func activeRegistration(deviceId: String) async throws -> RegistrationRecord?
    /// A user's registrations except pending ones, newest first.
    func registrations(userId: String) async throws -> [RegistrationRecord]
    /// Makes a pending registration active and marks the registrations it supersedes `replaced`, atomically.
    ///
    /// - Returns: The ids of the registrations replaced.
    /// - Throws: ``StoreError/conflict(_:)`` when the device has an active registration of another user;
    ///   ``StoreError/notFound(_:)`` when the registration is not pending.
    func activateRegistration(id: String, replacing scope: ReplacementScope, at: Date) async throws -> [String]
    /// Changes a registration's status if it currently has one of `from`; returns whether it changed.
    func updateRegistrationStatus(id: String, from: Set<RegistrationStatus>, to: RegistrationStatus, at: Date)
        async throws -> Bool
    /// Counts a failed signature of an active registration and locks it when the count reaches `threshold`, in one
    /// atomic step. Returns whether the registration is locked now. (A success resets the count: see
    /// ``completeSignIn(challenge:session:at:)``.)
    func recordFailedSignature(registrationId: String, threshold: Int64, at: Date) async throws -> Bool
    /// Unlocks a locked registration and clears its count; returns whether it was locked.
    func unlockRegistration(id: String, at: Date) async throws -> Bool

    // MARK: Challenges

    func insertChallenge(_ challenge: ChallengeRecord) async throws
    /// Records a sign-in challenge answered by a failed attempt (stored as consumed at `at`), so that it is never
    /// answered again. Sign-in challenges are not stored when issued: they carry their own binding and expiry (see
    /// `SelfContainedChallenges`); `challenge.expiresAt` is how long the record must be kept.
    ///
    /// - Returns: Whether it was recorded now: `false` when a challenge with this value is recorded already (another
    ///   attempt answered it first) or the registration does not exist.
    func recordAnsweredChallenge(_ challenge: ChallengeRecord, at: Date) async throws -> Bool
    /// Completes a biometric sign-in whose signature was verified, atomically, if everything else it needs still holds:
    /// no challenge with this value has been answered; the registration is active and belongs to `session.userId`; the
    /// user exists. Then it records the challenge as answered (consumed at `at`; it is not stored before: see
    /// ``recordAnsweredChallenge(_:at:)``), records the registration's use (clearing its failed-signature count) and
    /// stores `session` and `events` (the sign-in's audit trail), in one transaction. The challenge's authenticity and
    /// expiry are the caller's to check first.
    ///
    /// - Returns: The user, or `nil` when a condition failed (another attempt answered the challenge first, the
    ///   registration was revoked...): then nothing was written.
    func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, events: [AuditEventRecord], at: Date)
        async throws -> UserRecord?
    /// Atomically consumes the newest unconsumed challenge of a registration for `purpose`.
    func consumeLatestChallenge(registrationId: String, purpose: ChallengePurpose, at: Date) async throws
        -> ChallengeRecord?

    // MARK: Passkeys

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

    /// Stores a WebAuthn challenge.
    func insertWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord) async throws
    /// Records a passkey sign-in challenge answered by a failed attempt (stored as consumed at `at`), so that it is
    /// never answered again. Passkey sign-in challenges are not stored when issued (they carry their own expiry under a
    /// MAC); `challenge.expiresAt` is how long the record must be kept.
    ///
    /// - Returns: Whether it was recorded now (`false`: a challenge with this value is recorded already).
    func recordAnsweredWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord, at: Date) async throws -> Bool
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
    /// Atomically consumes the unconsumed WebAuthn challenge with this value and purpose.
    func consumeWebAuthnChallenge(_ challenge: String, purpose: ChallengePurpose, at: Date) async throws
        -> WebAuthnChallengeRecord?

    // MARK: App Attest

    /// Stores an attested key. Throws ``StoreError/conflict(_:)`` when the key id is already registered.
    func insertAppAttestKey(_ key: AppAttestKeyRecord) async throws
    func appAttestKey(keyId: String) async throws -> AppAttestKeyRecord?
    /// Moves a key's counter from `previous` to the larger `counter`, atomically; `false` when the stored counter is no
    /// longer `previous` (another assertion got there first: the caller's is a replay or a race).
    func advanceAppAttestCounter(keyId: String, from previous: Int64, to counter: Int64, at: Date) async throws -> Bool

    // MARK: App PINs

    /// Sets (or replaces) the app PIN of `userId`'s active registration, clearing its failure count; returns whether
    /// such a registration exists.
    func setPin(registrationId: String, userId: String, pinHash: String, at: Date) async throws -> Bool
    /// Removes the app PIN of one of `userId`'s registrations; returns whether it had one.
    func removePin(registrationId: String, userId: String) async throws -> Bool
    /// Counts a PIN attempt before it is checked, atomically, so that at most `maxAttempts` wrong PINs are ever
    /// checked however many requests race.
    func beginPinAttempt(registrationId: String, maxAttempts: Int64) async throws -> PinAttempt
    /// After a wrong PIN: disables the PIN when its count reached `maxAttempts`; returns whether it is disabled now.
    func recordWrongPin(registrationId: String, maxAttempts: Int64, at: Date) async throws -> Bool
    /// After a right PIN: clears the count, records the registration's use and stores `session`, atomically.
    /// `false` when the PIN was disabled or removed in the meantime (nothing is written).
    func completePinSignIn(registrationId: String, session: SessionRecord, events: [AuditEventRecord], at: Date) async throws -> Bool
    /// A password sign-in re-enables the disabled PINs of the user's registrations; returns their ids.
    func reenablePins(userId: String) async throws -> [String]

    // MARK: Audit trail

    func insertAuditEvent(_ event: AuditEventRecord) async throws
    func auditEvents(_ query: AuditEventQuery) async throws -> [AuditEventRecord]
    /// Events of `types` at or after `since`, counted by time bucket (`bucket` long, aligned to the epoch), type,
    /// outcome and reason: what the admin console's charts draw.
    func auditEventCounts(since: Date, bucket: TimeInterval, types: [String]) async throws -> [AuditEventCount]
    /// The user's sessions that have not ended at `at` (not revoked, not expired), newest first.
    func activeSessions(userId: String, at: Date) async throws -> [SessionRecord]
    /// Sets whether the user's passkeys must be device-bound; false when there is no such user.
    func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool
    /// Deletes the events that occurred before `cutoff` (the retention limit); returns how many.
    func deleteAuditEvents(before cutoff: Date) async throws -> Int

    // MARK: Abuse protection

    /// Takes one token from the bucket `key` (capacity `capacity`, one token back every `interval`), shared by every
    /// instance using this database. Returns `nil` when allowed, or how long until a token is available.
    func takeRateLimitToken(key: String, capacity: Int64, interval: TimeInterval, at: Date) async throws -> TimeInterval?
    /// Counts a failed password sign-in for `key`; a count whose last failure is older than `window` starts again.
    func recordLoginFailure(key: String, window: TimeInterval, at: Date) async throws -> LoginFailures
    func loginFailures(key: String) async throws -> LoginFailures?
    func clearLoginFailures(key: String) async throws

    /// Counts a failed credential check (a wrong password or PIN) from `address`, atomically: a count whose window
    /// (started by its first failure) is older than `window` starts again; when the count reaches `limit` the address
    /// is blocked until `window` after this failure (and each further failure while blocked extends it).
    func recordFailedCredentialCheck(address: String, limit: Int64, window: TimeInterval, at: Date) async throws -> AddressFailures
    /// The address's block, if it is blocked at `at`.
    func addressBlock(address: String, at: Date) async throws -> AddressFailures?
    /// Every address blocked at `at`, the latest block first (at most `limit`).
    func blockedAddresses(at: Date, limit: Int) async throws -> [AddressFailures]
    /// Forgets an address's failures and block; returns whether it was blocked at `at`.
    func clearAddressFailures(address: String, at: Date) async throws -> Bool

    // MARK: Tokens

    /// Every signing key, oldest generation first.
    func signingKeys() async throws -> [SigningKeyRecord]
    /// Adds a key; returns `false` (and adds nothing) when its generation or kid is taken, which is how two instances
    /// that rotate at once end up with one new key.
    func insertSigningKey(_ key: SigningKeyRecord) async throws -> Bool
    /// The session with this `sid`, whatever its state.
    func session(id: String) async throws -> SessionRecord?
    /// Gives the session `id` unless it already has one; returns the session's id, or `nil` if there is no such session.
    func assignSessionId(tokenHash: String, id: String) async throws -> String?

    // MARK: Confirmations

    func insertConfirmation(_ confirmation: ConfirmationRecord) async throws
    func confirmation(id: String) async throws -> ConfirmationRecord?
    /// Approves (with `approval`) or declines (without) a pending confirmation that has not expired at `at`, storing
    /// `events` in the same transaction; returns `false` when it was not pending or had expired, so of concurrent
    /// decisions exactly one succeeds. An approval by a registration also resets its failed-signature count.
    func decideConfirmation(id: String, approval: ConfirmationRecord.Approval?, events: [AuditEventRecord], at: Date) async throws -> Bool

    // MARK: Administration

    func insertAdminKey(_ key: AdminKeyRecord) async throws
    /// The unrevoked admin key with this hash.
    func adminKey(keyHash: String) async throws -> AdminKeyRecord?
    func adminKeys() async throws -> [AdminKeyRecord]
    @discardableResult
    func revokeAdminKey(id: String, at: Date) async throws -> Bool
    /// Users, newest first, optionally only those whose email contains `emailContaining`, after the user `afterId`.
    func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord]
    /// Revokes every live session of a user ("sign out everywhere") except `keeping` (a token hash); returns how many.
    func revokeSessions(userId: String, keeping: String?, at: Date) async throws -> Int
    /// Replaces a user's password hash; returns whether the user exists.
    func updatePassword(userId: String, passwordHash: String) async throws -> Bool
    /// A stored setting (the runtime policy is one, as JSON).
    func setting(name: String) async throws -> String?
    func saveSetting(name: String, value: String, at: Date) async throws
    /// Stores a setting only if it has no value yet; returns whether this call stored it.
    func insertSetting(name: String, value: String, at: Date) async throws -> Bool

    // MARK: Authenticator metadata

    /// The metadata BLOB in use, if one was stored.
    func metadataBLOB() async throws -> MetadataBLOBRecord?
    /// The stored BLOB's number alone (what instances poll: the BLOB itself is megabytes).
    func metadataBLOBNumber() async throws -> Int64?
    /// Stores a BLOB unless the stored one's number is as large or larger; returns whether this call stored it (so
    /// of instances racing with the same BLOB one stores it, and an older BLOB never replaces a newer one).
    func saveMetadataBLOB(_ record: MetadataBLOBRecord) async throws -> Bool

    // MARK: Housekeeping

    /// Deletes challenges and sessions that ended before `cutoff`, and pending registrations none of whose challenges
    /// is still answerable at `cutoff` (abandoned enrolments).
    func purgeExpired(before cutoff: Date) async throws -> PurgeResult
}

extension TouchstoneStore {
    /// ``completeSignIn(challenge:session:events:at:)`` without audit events.
    public func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, at: Date) async throws -> UserRecord? {
        try await self.completeSignIn(challenge: challenge, session: session, events: [], at: at)
    }

    /// ``completePinSignIn(registrationId:session:events:at:)`` without audit events.
    public func completePinSignIn(registrationId: String, session: SessionRecord, at: Date) async throws -> Bool {
        try await self.completePinSignIn(registrationId: registrationId, session: session, events: [], at: at)
    }

    /// ``completePasskeySignIn(challenge:passkeyId:signCount:backupEligible:backedUp:cloneWarning:session:events:at:)`` without audit
    /// events.
    public func completePasskeySignIn(
        challenge: WebAuthnChallengeRecord,
        passkeyId: String,
        signCount: Int64,
        backupEligible: Bool,
        backedUp: Bool,
        cloneWarning: Bool,
        session: SessionRecord,
        at: Date
    ) async throws -> Bool {
        try await self.completePasskeySignIn(
            challenge: challenge,
            passkeyId: passkeyId,
            signCount: signCount,
            backupEligible: backupEligible,
            backedUp: backedUp,
            cloneWarning: cloneWarning,
            session: session,
            events: [],
            at: at
        )
    }
}
