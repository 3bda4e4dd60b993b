public import Foundation

/// Biometric device keys: registrations, what a sign-in reads of them, their lockout, and the app PINs that fall back on them.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol RegistrationStore: Sendable {
    /// Inserts a registration (normally ``RegistrationStatus/pending``).
    func insertRegistration(_ registration: RegistrationRecord) async throws
    func registration(id: String) async throws -> RegistrationRecord?
    /// Gives a pending or active registration of `userId` its DPoP proof key; false when it has one already (or is not
    /// the user's, or is revoked). Throws ``StoreError/conflict(_:)`` when another registration has this key.
    func setRegistrationProofKey(id: String, userId: String, thumbprint: String) async throws -> Bool

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
}
