import Foundation
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebhooks

/// Device-key sign-up (issue #42): an account created from the phone with a device key, no password and no passkey.
///
/// The start checks what enrolment checks (the algorithm and key, the device not enrolled for another account, the
/// integrity proof) and keeps the pending sign-up with a fresh challenge; the finish consumes it (single use, whatever
/// the outcome), verifies the signature, and creates the account, its active registration (with its device
/// credential), its first session, the events and the verification mail in one unit of work.
struct DeviceKeySignUpService: Sendable {
    let store: any TouchstoneStore
    let deviceKeys: BiometricService
    let integrity: EnrolmentIntegrity
    let sessions: SessionManager
    let audit: AuditLog
    let recovery: RecoveryService
    let now: @Sendable () -> Date
    /// `TOUCHSTONE_SIGN_UP`.
    let enabled: Bool

    struct StartInput: Sendable {
        var email: String
        var displayName: String?
        var publicKey: String
        var algorithm: String
        var deviceId: String
        var deviceName: String?
        var appAttest: AppAttestProof?
        var keyAttestation: [String]?
    }

    /// What the finish needs besides the account: kept as the pending sign-up's details.
    private struct Details: Codable {
        var challenge: String
        var algorithm: String
        /// base64url of the key's SubjectPublicKeyInfo.
        var publicKey: String
        var deviceId: String
        var deviceName: String?
        var appAttestKeyId: String?
        var keyAttestationLevel: String?
        var keyAttestationPackage: String?
    }

    struct Started: Sendable {
        var signUpId: String
        var challenge: String
        var expiresAt: Date
    }

    struct SignedUp: Sendable {
        var user: UserRecord
        var token: String
        var session: SessionRecord
        var registration: RegistrationRecord
        var deviceCredential: String
    }

    func start(_ input: StartInput) async throws -> Started {
        guard self.enabled else { throw APIError.signUpDisabled }
        guard self.deviceKeys.policy.current.biometricsEnabled else { throw APIError.biometricsDisabled }
        guard try await self.store.user(email: input.email) == nil else { throw APIError.emailTaken }
        let (algorithm, key) = try self.deviceKeys.validatedKey(input.publicKey, algorithm: input.algorithm)
        if try await self.store.activeRegistration(deviceId: input.deviceId) != nil { throw APIError.deviceEnrolledForAnotherUser }
        let checked = try await self.integrity.check(
            appAttest: input.appAttest, keyAttestation: input.keyAttestation, publicKey: input.publicKey, userId: nil)
        let attested = try await checked.attestKey?(key)
        let now = self.now()
        let challenge = self.deviceKeys.secrets.newChallenge()
        let details = Details(
            challenge: challenge,
            algorithm: algorithm.rawValue,
            publicKey: Base64.urlEncode(key.spkiDERRepresentation),
            deviceId: input.deviceId,
            deviceName: input.deviceName,
            appAttestKeyId: checked.appAttestKeyId,
            keyAttestationLevel: attested?.securityLevel,
            keyAttestationPackage: attested?.packageName
        )
        let signUp = PendingSignUpRecord(
            id: self.deviceKeys.secrets.newIdentifier(),
            kind: .deviceKey,
            userId: self.deviceKeys.secrets.newIdentifier(),
            email: input.email,
            displayName: input.displayName,
            details: String(decoding: try JSONEncoder().encode(details), as: UTF8.self),
            createdAt: now,
            expiresAt: Date(millis: now.addingTimeInterval(self.deviceKeys.configuration.challengeTTL.timeInterval).millis)
        )
        try await self.store.insertPendingSignUp(signUp)
        self.audit.metrics?.started(.biometricEnrolment)
        return Started(signUpId: signUp.id, challenge: challenge, expiresAt: signUp.expiresAt)
    }

    /// - Throws: 401 `challenge_not_found` (unknown, used), `challenge_expired`, `invalid_signature` (the sign-up is
    ///   used up: start again); 409 `email_taken`, `device_enrolled_for_another_user` when either was taken meanwhile.
    func finish(signUpId: String, signature: [UInt8], proofKey: ProofKeyInput? = nil) async throws -> SignedUp {
        guard self.enabled else { throw APIError.signUpDisabled }
        let now = self.now()
        guard let pending = try await self.store.consumePendingSignUp(id: signUpId, kind: .deviceKey),
            let text = pending.details, let details = try? JSONDecoder().decode(Details.self, from: Data(text.utf8)),
            let algorithm = SignatureAlgorithm(rawValue: details.algorithm), let spki = Base64.urlDecodeCanonical(details.publicKey)
        else {
            throw APIError.challengeNotFound
        }
        guard now < pending.expiresAt else { throw APIError.challengeExpired }
        let key = try self.deviceKeys.keys.key(bytes: spki, algorithm: algorithm)
        guard key.isValidSignature(signature, for: Array(ProofKeyInput.message(challenge: details.challenge, proofKey: proofKey).utf8)) else {
            throw APIError.invalidSignature
        }
        try proofKey?.verify(challenge: details.challenge)
        if details.keyAttestationLevel != nil { try proofKey?.requireAttested(challenge: details.challenge) }

        let user = UserRecord(id: pending.userId, email: pending.email, displayName: pending.displayName, passwordHash: nil, createdAt: now)
        var made = RegistrationRecord(
            id: self.deviceKeys.secrets.newIdentifier(),
            userId: user.id,
            deviceId: details.deviceId,
            deviceName: details.deviceName,
            algorithm: algorithm.rawValue,
            publicKey: spki,
            keyFingerprint: key.fingerprint,
            status: .pending,
            createdAt: now,
            appAttestKeyId: details.appAttestKeyId,
            keyAttestation: details.keyAttestationLevel.map { KeyAttestationRecord(securityLevel: $0, packageName: details.keyAttestationPackage ?? "") }
        )
        made.proofKeyThumbprint = proofKey?.thumbprint
        let registration = made
        let (token, session) = self.sessions.make(for: user, method: .biometric, registrationId: registration.id)
        let deviceCredential = self.deviceKeys.secrets.newToken()
        let finished = self.audit.event(.registrationFinished, userId: user.id, registrationId: registration.id, reason: "sign_up")
        let store = self.store
        try await NewAccount(store: self.store, audit: self.audit, recovery: self.recovery).commit(
            user: user, session: session, how: "device_key", registrationId: registration.id, events: [finished],
            credential: { tx in
                try await tx.insertRegistration(registration)
                _ = try await tx.activateRegistration(id: registration.id, replacing: .sameDevice, at: now)
                try await tx.setDeviceCredential(registrationId: registration.id, credentialHash: Secrets.hash(token: deviceCredential), at: now)
            },
            conflict: {
                if try await store.user(email: user.email) != nil { return APIError.emailTaken }
                // The device enrolled for someone else, or (with a proof key) that key registered already.
                guard proofKey != nil else { return APIError.deviceEnrolledForAnotherUser }
                let enrolled = try await store.activeRegistration(deviceId: details.deviceId)
                return enrolled != nil ? APIError.deviceEnrolledForAnotherUser : APIError.proofKeyInUse
            }
        )
        guard let active = try await self.store.registration(id: registration.id) else { throw APIError.registrationNotFound }
        return SignedUp(user: user, token: token, session: session, registration: active, deviceCredential: deviceCredential)
    }
}
