import Tracing
import Foundation
import Logging
import TouchstoneCrypto
import TouchstoneStore

/// The two biometric ceremonies: registering a device key, and signing in with it.
///
/// What is signed is the exact UTF-8 bytes of the challenge string the server returned.
struct BiometricService: Sendable {
    let store: any RegistrationStore & ChallengeLedger
    let sessions: SessionManager
    let secrets: Secrets
    /// Parsed keys of registrations, so a sign-in does not re-parse the stored key.
    let keys: DevicePublicKeyCache
    /// The user and key of registrations that started a sign-in on this instance, by registration id, so that its
    /// finish verifies the signature before it touches the database, and then completes in one write.
    let signers: ParsedValueCache<String, KnownSigner>
    /// Sign-in challenges: issued without a write, checked by their MAC, recorded when answered.
    let challenges: SelfContainedChallenges
    let now: @Sendable () -> Date
    let configuration: TouchstoneConfiguration
    /// Whether biometrics are on, the device policy, the algorithms and the lockout threshold.
    let policy: PolicyProvider
    let audit: AuditLog

    /// What a sign-in's finish needs of a registration before reading it: its user and its key. Neither ever changes
    /// for a registration (a new key is a new registration), so a value held is never stale; whether the registration
    /// is still active, the challenge still answerable and the user still there, the store checks in the transaction
    /// that completes the sign-in.
    struct KnownSigner: Sendable {
        var userId: String
        var algorithm: String
        var publicKey: [UInt8]
        var key: DevicePublicKey
    }

    /// What the key of sign-in challenges is derived for, from the key-encryption key every instance shares.
    static let challengePurpose = "touchstone biometric sign-in challenge v1"

    /// How long an answered sign-in challenge stays recorded past its expiry: a finish refuses an expired challenge
    /// before it reads the record, and this margin covers instances whose clocks differ by less.
    static let answeredChallengeRetention: TimeInterval = 300

    struct StartedChallenge {
        var registrationId: String
        var challenge: String
        var expiresAt: Date
    }

    // MARK: Registration

    /// Step 1 of enrolment: checks the caller, the key and the device, stores a pending registration and a challenge.
    func startRegistration(
        caller: AuthenticatedSession,
        publicKey encodedKey: String,
        algorithm algorithmName: String,
        deviceId: String,
        deviceName: String?,
        appAttestKeyId: String? = nil,
        attestKey: (@Sendable (DevicePublicKey) async throws -> KeyAttestationRecord)? = nil
    ) async throws -> StartedChallenge {
        try self.requireEnabled()
        let now = self.now()
        try await self.sessions.requireEnrolmentAllowed(caller, within: self.configuration.reauthenticationWindow.timeInterval)
        try self.sessions.requireVerifiedEmailForEnrolment(caller)
        let (algorithm, key) = try self.validatedKey(encodedKey, algorithm: algorithmName)
        if let existing = try await self.store.activeRegistration(deviceId: deviceId), existing.userId != caller.user.id {
            throw APIError.deviceEnrolledForAnotherUser
        }
        let keyAttestation = try await attestKey?(key)
        let registration = RegistrationRecord(
            id: self.secrets.newIdentifier(),
            userId: caller.user.id,
            deviceId: deviceId,
            deviceName: deviceName,
            algorithm: algorithm.rawValue,
            publicKey: key.spkiDERRepresentation,
            keyFingerprint: key.fingerprint,
            status: .pending,
            createdAt: now,
            appAttestKeyId: appAttestKeyId,
            keyAttestation: keyAttestation
        )
        try await self.store.insertRegistration(registration)
        let started = try await self.issueChallenge(for: registration.id, purpose: .registration, at: now)
        try await self.audit.record(.registrationStarted, .info, userId: caller.user.id, registrationId: registration.id)
        self.audit.metrics?.started(.biometricEnrolment)
        return started
    }

    /// A device key as enrolment and device-key sign-up take it: an allowed algorithm, and a valid key of it.
    ///
    /// - Throws: 400 `unsupported_algorithm`, `invalid_public_key`.
    func validatedKey(_ encodedKey: String, algorithm algorithmName: String) throws -> (SignatureAlgorithm, DevicePublicKey) {
        let policy = self.policy.current
        guard let algorithm = SignatureAlgorithm(rawValue: algorithmName) else {
            let names = policy.algorithms.map(\.rawValue).joined(separator: ", ")
            throw APIError.unsupportedAlgorithm("algorithm '\(algorithmName)' is not supported; use one of \(names)")
        }
        guard policy.algorithms.contains(algorithm) else {
            throw APIError.unsupportedAlgorithm("algorithm \(algorithm.rawValue) is not allowed on this server")
        }
        do {
            return (algorithm, try DevicePublicKey(encoded: encodedKey, algorithm: algorithm))
        } catch {
            throw APIError.invalidPublicKey(error.reason)
        }
    }

    /// Step 2 of enrolment: the signature over the challenge proves possession of the private key. With a proof key
    /// (issue #43) both keys sign `<challenge>.<thumbprint>` and the registration keeps the proof key's thumbprint.
    ///
    /// - Returns: The active registration and its device credential (issue #34: it lets the phone read sign-in
    ///   requests without a biometric prompt; shown once, stored as its hash with the activation).
    func finishRegistration(caller: AuthenticatedSession, registrationId: String, signature: [UInt8], proofKey: ProofKeyInput? = nil)
        async throws -> (registration: RegistrationRecord, deviceCredential: String)
    {
        let now = self.now()
        guard let registration = try await self.store.registration(id: registrationId),
            registration.userId == caller.user.id
        else {
            throw APIError.registrationNotFound
        }
        guard registration.status == .pending else { throw APIError.challengeNotFound }
        // A recovery-code session enrols one device: checked again here, where several may have been started.
        if caller.session.methods == [.recoveryCode] {
            try await self.sessions.requireEnrolmentAllowed(caller, within: self.configuration.reauthenticationWindow.timeInterval)
        }
        guard let challenge = try await self.store.consumeLatestChallenge(
            registrationId: registrationId,
            purpose: .registration,
            at: now
        ) else {
            throw APIError.challengeNotFound
        }
        guard now < challenge.expiresAt else { throw APIError.challengeExpired }
        guard try self.verify(signature, over: ProofKeyInput.message(challenge: challenge.challenge, proofKey: proofKey), by: registration) else {
            throw APIError.invalidSignature
        }
        try proofKey?.verify(challenge: challenge.challenge)
        if registration.keyAttestation != nil { try proofKey?.requireAttested(challenge: challenge.challenge) }
        let scope: ReplacementScope = self.policy.current.devicePolicy == .singleDevice ? .allOfUser : .sameDevice
        // The activation, the registrations it replaces and their events (with their webhooks) commit together.
        let events: [AuditEventRecord]
        let audit = self.audit, userId = caller.user.id, address = caller.user.email
        let deviceCredential = self.secrets.newToken()
        do {
            events = try await self.audit.store.unitOfWork { tx in
                let replaced = try await tx.activateRegistration(id: registrationId, replacing: scope, at: now)
                try await tx.setDeviceCredential(registrationId: registrationId, credentialHash: Secrets.hash(token: deviceCredential), at: now)
                if let proofKey { try await Self.setProofKey(proofKey, registrationId: registrationId, userId: userId, in: tx) }
                let events = [audit.event(.registrationFinished, userId: userId, registrationId: registrationId, notify: address)]
                    + replaced.map { audit.event(.registrationReplaced, .info, userId: userId, registrationId: $0, reason: registrationId) }
                for event in events { try await tx.insertAuditEvent(event) }
                return events
            }
        } catch let error as StoreError where error == .conflict {
            throw APIError.deviceEnrolledForAnotherUser
        } catch let error as StoreError where error == .notFound {
            throw APIError.challengeNotFound
        }
        self.audit.committed(events)
        guard let active = try await self.store.registration(id: registrationId) else { throw APIError.registrationNotFound }
        return (active, deviceCredential)
    }

    /// Revokes one of the caller's registrations (not from a session opened by a mailed or recovery code).
    func deleteRegistration(caller: AuthenticatedSession, registrationId: String) async throws {
        try self.sessions.requireNotCodeSession(caller, within: self.configuration.reauthenticationWindow.timeInterval)
        guard let registration = try await self.store.registration(id: registrationId),
            registration.userId == caller.user.id, registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        let now = self.now()
        let userId = caller.user.id
        try await self.audit.commit(self.audit.event(.registrationRevoked, userId: userId, registrationId: registrationId)) { tx in
            // Not the account's last way in (the row lock serialises this with the other removals).
            guard try await tx.lockUser(id: userId) else { return false }
            guard try await tx.credentials(userId: userId).keepsACredential(withoutRegistration: registrationId) else {
                throw APIError.lastCredential
            }
            return try await tx.updateRegistrationStatus(id: registrationId, from: [.active, .locked], to: .revoked, at: now)
        }
    }

    /// Unlocks one of the caller's locked registrations; needs fresh strong authentication.
    func unlockRegistration(caller: AuthenticatedSession, registrationId: String) async throws -> RegistrationRecord {
        try self.sessions.requireFreshStrongAuthentication(caller, within: self.configuration.reauthenticationWindow.timeInterval)
        guard let registration = try await self.store.registration(id: registrationId), registration.userId == caller.user.id,
            registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        guard try await self.store.unlockRegistration(id: registrationId, at: self.now()) else { throw APIError.registrationNotLocked }
        try await self.audit.record(.registrationUnlocked, userId: caller.user.id, registrationId: registrationId)
        guard let unlocked = try await self.store.registration(id: registrationId) else { throw APIError.registrationNotFound }
        return unlocked
    }

    /// Why a device says its key is unusable.
    enum InvalidationReason: String, CaseIterable, Sendable {
        /// Biometric enrolment changed and the key (access policy `biometryCurrentSet`) was invalidated by the OS.
        case biometryChanged = "biometry_changed"
        /// The key is gone for another reason (restored backup, keychain reset).
        case keyLost = "key_lost"
    }

    /// Marks an active registration `invalidated` at its device's request. Idempotent: an already invalidated
    /// registration answers success; anything else that is not active, or another device's, is not found.
    func invalidateRegistration(registrationId: String, deviceId: String, reason: InvalidationReason) async throws {
        guard let registration = try await self.store.registration(id: registrationId),
            registration.deviceId == deviceId,
            registration.status == .active || registration.status == .invalidated
        else {
            throw APIError.registrationNotFound
        }
        guard registration.status == .active else { return }
        let now = self.now()
        let event = self.audit.event(.registrationInvalidated, userId: registration.userId, registrationId: registrationId, reason: reason.rawValue)
        try await self.audit.commit(event) { tx in
            try await tx.updateRegistrationStatus(id: registrationId, from: [.active], to: .invalidated, at: now)
        }
    }

    // MARK: Authentication

    /// Step 1 of sign-in: finds the registration by id or by public key and issues a challenge bound to it.
    ///
    /// Nothing is written: the challenge carries the registration and its expiry under a MAC (``SelfContainedChallenges``,
    /// with a key every instance derives from the shared key-encryption key), so any instance can check it, and it is
    /// recorded when it is answered, which is what makes it single use.
    func startAuthentication(registrationId: String?, publicKey: String?) async throws -> StartedChallenge {
        try self.requireEnabled()
        let registration: SignInRegistrationRecord?
        if let registrationId {
            registration = try await self.store.signInRegistration(id: registrationId)
        } else if let publicKey {
            registration = try await self.registration(forEncodedKey: publicKey).map {
                SignInRegistrationRecord(id: $0.id, userId: $0.userId, status: $0.status, algorithm: $0.algorithm, publicKey: $0.publicKey)
            }
        } else {
            throw APIError.invalidRequest("provide 'registrationId' or 'publicKey'")
        }
        guard let registration, registration.status != .pending else { throw APIError.registrationNotFound }
        guard registration.status != .locked else { throw APIError.registrationLocked }
        guard registration.status == .active else { throw APIError.registrationRevoked }
        // The finish verifies with the key held before it touches the database.
        self.remember(id: registration.id, userId: registration.userId, algorithm: registration.algorithm, publicKey: registration.publicKey)
        let expiresAt = Date(millis: self.now().addingTimeInterval(self.configuration.challengeTTL.timeInterval).millis)
        let challenge = self.challenges.issue(
            for: registration.id,
            expiresAtMillis: expiresAt.millis,
            nonce: self.secrets.randomBytes(SelfContainedChallenges.nonceLength)
        )
        self.audit.metrics?.started(.biometric)
        return StartedChallenge(registrationId: registration.id, challenge: challenge, expiresAt: expiresAt)
    }

    /// Step 2 of sign-in: checks the challenge, verifies the signature and opens a biometric session.
    ///
    /// When this instance knows the registration's key (it started the sign-in, or finished an earlier one) and the
    /// challenge is one issued for the registration and unexpired, the signature is verified first and a valid one
    /// completes the sign-in in one write whose conditions are those the checks below make
    /// (``TouchstoneStore/completeSignIn(challenge:session:events:at:)``). Anything else (an unknown registration, a
    /// wrong signature, a condition that no longer holds) takes the full path, which reads what it needs and answers
    /// exactly what is wrong; the fast write changes nothing when it fails.
    func finishAuthentication(
        registrationId: String,
        challenge: String,
        signature: [UInt8],
        sessionLifetime: TimeInterval?
    ) async throws -> (UserRecord, String, SessionRecord) {
        try self.requireEnabled()
        let now = self.now()
        // The expiry the challenge carries, when this server issued it for this registration.
        let expiry = self.challenges.expiry(of: challenge, for: registrationId)
        var verdict: Verdict?
        if let expiry, now.millis < expiry, let signer = self.signers.cachedValue(for: registrationId) {
            let valid = self.verify(signature, over: challenge, with: signer.key, algorithm: signer.algorithm)
            verdict = Verdict(signer: signer, challenge: challenge, valid: valid)
            if valid,
                let signedIn = try await self.complete(
                    userId: signer.userId,
                    challenge: self.answered(challenge, registrationId: registrationId, expiry: expiry, at: now),
                    sessionLifetime: sessionLifetime,
                    at: now
                )
            {
                return signedIn
            }
        }
        // The registration, its user and whether the challenge was answered already, in one read.
        guard let attempt = try await self.store.signInAttempt(registrationId: registrationId, challenge: challenge),
            attempt.registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        let registration = attempt.registration
        guard registration.status != .locked else { throw APIError.registrationLocked }
        guard registration.status == .active else { throw APIError.registrationRevoked }
        // A challenge gets exactly one attempt, whatever its outcome: a failed attempt records it here; a successful
        // one records it in the same transaction that stores the session, and only the first of several concurrent
        // attempts can do that. Checking it first keeps the signature check out of the database's write path.
        guard let expiry, !attempt.challengeUsed else { throw APIError.challengeNotFound }
        // In whole milliseconds, as the challenge carries its expiry. An expired challenge is never answerable again:
        // nothing to record.
        guard now.millis < expiry else { throw APIError.challengeExpired }
        let answered = self.answered(challenge, registrationId: registration.id, expiry: expiry, at: now)
        let valid: Bool
        if let verdict, verdict.applies(to: registration, challenge: challenge) {
            valid = verdict.valid
        } else {
            valid = try self.verify(signature, over: challenge, by: registration)
        }
        guard valid else {
            guard try await self.store.recordAnsweredChallenge(answered, at: now) else {
                // Another attempt answered it first.
                throw APIError.challengeNotFound
            }
            // Counted per registration; the attempt that reaches the threshold locks it (and is still answered as what
            // it is: a wrong signature).
            try await self.audit.recordLockout(registration: registration, threshold: Int64(self.policy.current.lockoutThreshold), at: now)
            throw APIError.invalidSignature
        }
        guard attempt.user != nil else { throw APIError.registrationNotFound }
        self.remember(id: registration.id, userId: registration.userId, algorithm: registration.algorithm, publicKey: registration.publicKey)
        guard let signedIn = try await self.complete(
            userId: registration.userId,
            challenge: answered,
            sessionLifetime: sessionLifetime,
            at: now
        ) else {
            // Another attempt with the same challenge got there first (or the registration changed since the read).
            throw APIError.challengeNotFound
        }
        return signedIn
    }

    /// The record of an answered sign-in challenge: kept until its expiry and a margin (``answeredChallengeRetention``).
    private func answered(_ challenge: String, registrationId: String, expiry: Int64, at now: Date) -> ChallengeRecord {
        ChallengeRecord(
            challenge: challenge,
            registrationId: registrationId,
            purpose: .authentication,
            createdAt: now,
            expiresAt: Date(millis: expiry).addingTimeInterval(Self.answeredChallengeRetention)
        )
    }

    /// A signature already checked against a known key: the full path reuses it when the registration it reads has
    /// that key and the challenge is the one signed.
    private struct Verdict {
        var signer: KnownSigner
        var challenge: String
        var valid: Bool

        func applies(to registration: RegistrationRecord, challenge: String) -> Bool {
            self.challenge == challenge && self.signer.algorithm == registration.algorithm
                && self.signer.publicKey == registration.publicKey && self.signer.userId == registration.userId
        }
    }

    /// Stores the session of a verified sign-in with its audit event; `nil` when the store's conditions no longer hold
    /// (nothing was written).
    private func complete(
        userId: String,
        challenge: ChallengeRecord,
        sessionLifetime: TimeInterval?,
        at now: Date
    ) async throws -> (UserRecord, String, SessionRecord)? {
        let registrationId = challenge.registrationId
        let (token, session) = self.sessions.make(
            forUserId: userId,
            method: .biometric,
            registrationId: registrationId,
            requestedLifetime: sessionLifetime
        )
        let event = self.audit.event(.biometricLogin, userId: userId, registrationId: registrationId)
        guard let user = try await self.store.completeSignIn(challenge: challenge, session: session, events: [event], at: now) else {
            return nil
        }
        self.audit.committed([event])
        return (user, token, session)
    }

    /// Holds an active registration's user and parsed key for the finish, unless held already (they never change; a
    /// key that does not parse is left to the full path, which reports the damaged row).
    private func remember(id: String, userId: String, algorithm name: String, publicKey: [UInt8]) {
        guard self.signers.capacity > 0, self.signers.cachedValue(for: id) == nil,
            let algorithm = SignatureAlgorithm(rawValue: name),
            let key = try? self.keys.key(bytes: publicKey, algorithm: algorithm)
        else {
            return
        }
        self.signers.set(KnownSigner(userId: userId, algorithm: name, publicKey: publicKey, key: key), for: id)
    }

    // MARK: Helpers

    private func requireEnabled() throws {
        guard self.policy.current.biometricsEnabled else { throw APIError.biometricsDisabled }
    }

    private func issueChallenge(for registrationId: String, purpose: ChallengePurpose, at now: Date) async throws
        -> StartedChallenge
    {
        let challenge = self.challenge(for: registrationId, purpose: purpose, at: now)
        try await self.store.insertChallenge(challenge)
        return StartedChallenge(registrationId: registrationId, challenge: challenge.challenge, expiresAt: challenge.expiresAt)
    }

    private func challenge(for registrationId: String, purpose: ChallengePurpose, at now: Date) -> ChallengeRecord {
        ChallengeRecord(
            challenge: self.secrets.newChallenge(),
            registrationId: registrationId,
            purpose: purpose,
            createdAt: now,
            expiresAt: now.addingTimeInterval(self.configuration.challengeTTL.timeInterval)
        )
    }

    /// Finds a registration by its public key, in whichever encoding and algorithm the key parses.
    private func registration(forEncodedKey encoded: String) async throws -> RegistrationRecord? {
        var parsedAny = false
        for algorithm in SignatureAlgorithm.allCases {
            guard let key = try? DevicePublicKey(encoded: encoded, algorithm: algorithm) else { continue }
            parsedAny = true
            if let registration = try await self.store.latestRegistration(keyFingerprint: key.fingerprint) {
                return registration
            }
        }
        guard parsedAny else { throw APIError.invalidPublicKey("'publicKey' is not a public key in a supported encoding") }
        return nil
    }

    func verify(_ signature: [UInt8], over challenge: String, by registration: RegistrationRecord) throws -> Bool {
        guard let algorithm = SignatureAlgorithm(rawValue: registration.algorithm),
            let key = try? self.keys.key(bytes: registration.publicKey, algorithm: algorithm)
        else {
            // A stored key always parsed when it was stored; failing now means the row was damaged.
            throw APIError.internalError
        }
        return self.verify(signature, over: challenge, with: key, algorithm: algorithm.rawValue)
    }

    private func verify(_ signature: [UInt8], over challenge: String, with key: DevicePublicKey, algorithm: String) -> Bool {
        withSpan("device_key.verify") { span in
            span.attributes["touchstone.algorithm"] = algorithm
            return key.isValidSignature(signature, for: Array(challenge.utf8))
        }
    }
}
