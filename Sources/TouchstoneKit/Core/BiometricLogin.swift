public import Foundation
public import TouchstoneCrypto
import Crypto

/// Biometric login with a device-bound key: the three operations every app needs.
///
/// ```swift
/// let biometrics = BiometricLogin(
///     client: TouchstoneClient(baseURL: serverURL),
///     keyStore: SecureEnclaveKeyStore(),            // or SoftwareKeyStore on Linux and in tests
///     verifier: LocalAuthenticationVerifier(),
///     stateStore: FileStateStore(directory: appSupport)
/// )
/// // After a password sign-in, on a settings toggle:
/// try await biometrics.enable(session: passwordSession, deviceName: "Ana's iPhone")
/// // On the next launch:
/// let session = try await biometrics.login(reason: "Sign in to Example")
/// ```
///
/// Calls are serialised: an `enable` and a `login` never interleave.
public actor BiometricLogin {
    /// Whether biometric login can be offered, and why not.
    public enum Availability: Sendable, Hashable {
        case available(BiometryKind)
        /// The device cannot (hardware, enrolment, passcode, lockout).
        case deviceUnavailable(BiometryAvailability)
        /// The server turned biometric login off, or does not accept this SDK's algorithm.
        case disabledByServer
    }

    /// The local state, without prompting.
    public enum Status: Sendable, Hashable {
        case notEnabled
        case enabled(LocalEnrollment)
    }

    public nonisolated let client: TouchstoneClient
    let keyStore: any DeviceKeyStore
    let verifier: any UserVerifier
    let stateStore: any LocalStateStore
    let algorithm: SignatureAlgorithm
    let accessPolicy: KeyAccessPolicy
    private let appAttest: (any AppAttestProvider)?
    let makeKeyTag: @Sendable () -> String
    /// Keeps the device credential that reads sign-in requests without a prompt; nil: sign-in approval is off.
    let credentialStore: (any DeviceCredentialStore)?

    /// - Parameters:
    ///   - algorithm: The key algorithm; must be one the key store supports (ES256 for the Secure Enclave).
    ///   - accessPolicy: When the OS allows the key to be used.
    ///   - appAttest: When given (and supported by the device), enrolments carry an App Attest proof that the request
    ///     comes from the genuine app; servers that set `requireAppAttest` refuse enrolments without one.
    ///   - makeKeyTag: Names new keys; the default is a random UUID under `touchstone.`.
    ///   - credentialStore: Where the device credential for sign-in approvals is kept (``KeychainDeviceCredentialStore``
    ///     on Apple platforms); by default the state store, when it can keep one (``FileStateStore``,
    ///     ``InMemoryStateStore``).
    public init(
        client: TouchstoneClient,
        keyStore: any DeviceKeyStore,
        verifier: any UserVerifier,
        stateStore: any LocalStateStore,
        algorithm: SignatureAlgorithm = .es256,
        accessPolicy: KeyAccessPolicy = .biometryCurrentSet,
        appAttest: (any AppAttestProvider)? = nil,
        credentialStore: (any DeviceCredentialStore)? = nil,
        makeKeyTag: @escaping @Sendable () -> String = { "touchstone.\(UUID().uuidString.lowercased())" }
    ) {
        self.credentialStore = credentialStore ?? (stateStore as? any DeviceCredentialStore)
        self.appAttest = appAttest
        self.client = client
        self.keyStore = keyStore
        self.verifier = verifier
        self.stateStore = stateStore
        self.algorithm = algorithm
        self.accessPolicy = accessPolicy
        self.makeKeyTag = makeKeyTag
    }

    // MARK: State

    /// Whether the device and the server allow biometric login. Asks the server; never prompts.
    public func availability() async throws -> Availability {
        let device = await self.verifier.availability()
        guard case .available(let kind) = device else { return .deviceUnavailable(device) }
        let configuration = try await self.client.configuration()
        guard configuration.biometrics.enabled, configuration.biometrics.algorithms.contains(self.algorithm.rawValue) else {
            return .disabledByServer
        }
        return .available(kind)
    }

    /// The local enrolment. Never prompts, never calls the server.
    public func status() async throws -> Status {
        guard let enrollment = try await self.stateStore.loadEnrollment() else { return .notEnabled }
        return .enabled(enrollment)
    }

    // MARK: Enable

    /// Enables biometric login for the signed-in user on this device.
    ///
    /// Creates a key pair, registers its public key, proves possession by signing the server's challenge after the
    /// biometric prompt, and stores the user id and registration id locally. If the server refuses, the new key is
    /// deleted. Enabling again for the same user replaces the previous registration of this device.
    ///
    /// - Parameters:
    ///   - session: A session with fresh strong authentication (a password, passkey or device key within the server's
    ///     window; ``reauthenticate(session:reason:)`` makes an older one fresh).
    ///   - deviceName: Shown in the user's device list.
    ///   - reason: The text of the biometric prompt.
    /// - Throws: ``BiometricLoginError``: `.enabledForAnotherAccount` if another account is enabled here, the device
    ///   availability codes, prompt outcomes, or `.server` (for example `reauthentication_required`).
    @discardableResult
    public func enable(
        session: TouchstoneSession,
        deviceName: String? = nil,
        reason: String = "Enable biometric sign-in"
    ) async throws -> BiometricRegistration {
        let previous = try await self.stateStore.loadEnrollment()
        if let previous, previous.userId != session.user.id {
            throw BiometricLoginError(
                .enabledForAnotherAccount,
                "biometric sign-in on this device belongs to \(previous.email ?? "another account"); disable it first"
            )
        }
        try await self.requireDeviceAndServerAllowEnrolment()

        let deviceId = try await self.stateStore.deviceId()
        let tag = self.makeKeyTag()
        let publicKey = try await self.keyStoreCall {
            try await self.keyStore.createKey(tag: tag, algorithm: self.algorithm, policy: self.accessPolicy)
        }
        let registration: BiometricRegistration
        let deviceCredential: String?
        var proofKey: DPoPProofSigner?
        do {
            proofKey = try await self.makeProofKey(tag: tag)
            let grant = try await self.client.startRegistration(
                token: session.session.token,
                publicKey: publicKey,
                deviceId: deviceId,
                deviceName: deviceName,
                appAttest: try await self.appAttestProof(for: publicKey)
            )
            let verification = try await self.verifier.verifyUser(reason: reason)
            let message = DPoPProofSigner.enrolmentMessage(challenge: grant.challenge, proofKey: proofKey?.publicKey)
            let signature = try await self.keyStoreCall {
                try await self.keyStore.sign(message, withKey: tag, verification: verification)
            }
            (registration, deviceCredential) = try await self.client.finishEnrolment(
                token: session.session.token,
                registrationId: grant.registrationId,
                signature: signature,
                proofKey: try await self.proofKeyEnrolment(proofKey, challenge: grant.challenge)
            )
        } catch {
            try? await self.keyStore.deleteKey(tag: tag)
            if proofKey != nil { try? await self.proofKeyStore?.deleteProofKey(tag: tag) }
            throw Self.enableError(error)
        }
        var enrollment = LocalEnrollment(
            userId: session.user.id,
            registrationId: registration.id,
            keyTag: tag,
            algorithm: self.algorithm,
            email: session.user.email
        )
        enrollment.proofKeyTag = proofKey.map { _ in tag }
        try await self.stateStore.saveEnrollment(enrollment)
        if let deviceCredential, let store = self.credentialStore {
            try await store.saveDeviceCredential(deviceCredential, registrationId: registration.id)
        }
        // The server replaced the previous registration of this device; its keys are useless now.
        if let previous, previous.keyTag != tag {
            try? await self.keyStore.deleteKey(tag: previous.keyTag)
            if let proofTag = previous.proofKeyTag { try? await self.proofKeyStore?.deleteProofKey(tag: proofTag) }
        }
        return registration
    }

    /// The device can make and use a key, and the server accepts biometric sign-in with this SDK's algorithm.
    func requireDeviceAndServerAllowEnrolment() async throws {
        try await self.requireDeviceAvailable()
        let configuration = try await self.client.configuration()
        guard configuration.biometrics.enabled else {
            throw BiometricLoginError(.notAvailable, "the server does not allow biometric sign-in")
        }
        guard configuration.biometrics.algorithms.contains(self.algorithm.rawValue),
            self.keyStore.supportedAlgorithms.contains(self.algorithm)
        else {
            throw BiometricLoginError(.notAvailable, "algorithm \(self.algorithm.rawValue) is not supported here")
        }
    }

    // MARK: Disable

    /// Disables biometric login on this device: deletes the registration on the server first, then the local key and
    /// ids. A registration the server already revoked counts as deleted. If the server cannot be reached, nothing
    /// local is deleted, so the user can retry.
    public func disable(session: TouchstoneSession) async throws {
        guard let enrollment = try await self.stateStore.loadEnrollment() else { return }
        do {
            try await self.client.deleteRegistration(token: session.session.token, id: enrollment.registrationId)
        } catch let error as BiometricLoginError
            where error.serverCode == "registration_not_found" || error.code == .registrationRevoked
        {
            // Already gone on the server (or it belongs to an account this session cannot see): clean up locally.
        }
        try await self.forgetLocalEnrollment(enrollment)
    }

    // MARK: App PIN

    /// What a PIN closure is told when ``login(reason:sessionDurationMinutes:pinFallback:)`` falls back to the PIN.
    public struct PinRequest: Sendable, Hashable {
        /// Why: `.userFallback` (the user chose the fallback button) or `.lockedOut` (the OS locked biometrics).
        public var trigger: BiometricLoginError.Code
        /// 1 for the first PIN asked, 2 after a wrong one...
        public var attempt: Int
        /// The previous attempt's error (`.pinIncorrect`), to show "wrong PIN".
        public var previousError: BiometricLoginError?
    }

    /// Asks the user for the app PIN; `nil` when they cancel.
    public typealias PinProvider = @Sendable (PinRequest) async -> String?

    /// Sets (or changes) the app PIN of this device's registration: 4 to 8 digits, a fallback for when biometrics fail
    /// or are locked out. Needs a session from a recent password sign-in.
    @discardableResult
    public func setPin(_ pin: String, session: TouchstoneSession) async throws -> BiometricRegistration {
        guard var enrollment = try await self.stateStore.loadEnrollment(), enrollment.userId == session.user.id else {
            throw BiometricLoginError(.notEnabled, "biometric sign-in is not enabled for this account on this device")
        }
        let registration = try await self.client.setPin(token: session.session.token, registrationId: enrollment.registrationId, pin: pin)
        enrollment.pinSet = true
        try await self.stateStore.saveEnrollment(enrollment)
        return registration
    }

    /// Removes the app PIN of this device's registration.
    public func removePin(session: TouchstoneSession) async throws {
        guard var enrollment = try await self.stateStore.loadEnrollment(), enrollment.userId == session.user.id else { return }
        do {
            try await self.client.removePin(token: session.session.token, registrationId: enrollment.registrationId)
        } catch let error as BiometricLoginError where error.code == .pinNotSet {
            // Already gone.
        }
        enrollment.pinSet = false
        try await self.stateStore.saveEnrollment(enrollment)
    }

    /// Signs in with the app PIN directly (no biometric prompt).
    ///
    /// - Throws: `.pinIncorrect`, `.pinDisabled` (after too many wrong PINs; a password sign-in re-enables it),
    ///   `.pinNotSet`, `.notEnabled`, `.registrationRevoked`, `.server`, `.transport`.
    public func loginWithPin(_ pin: String, sessionDurationMinutes: Int? = nil) async throws -> TouchstoneSession {
        guard let enrollment = try await self.stateStore.loadEnrollment() else {
            throw BiometricLoginError(.notEnabled, "biometric sign-in is not enabled on this device")
        }
        do {
            let session = try await self.client.pinAuthentication(
                registrationId: enrollment.registrationId,
                pin: pin,
                sessionDurationMinutes: sessionDurationMinutes
            )
            return try await self.bound(session, enrollment)
        } catch let error as BiometricLoginError {
            throw try await self.handleLoginError(error, enrollment: enrollment)
        }
    }

    // MARK: Login

    /// Signs in with the device key: checks a key exists, asks the server for a challenge, shows the biometric prompt,
    /// signs, and returns the new session.
    ///
    /// With `pinFallback`, and an app PIN set on this device (``setPin(_:session:)``), a prompt the user leaves with the
    /// fallback button, or biometrics the OS has locked out, lead to the PIN instead: `pinFallback` is asked for it
    /// (again after a wrong PIN) until it returns `nil`, the PIN is accepted, or the server disables it.
    ///
    /// - Parameters:
    ///   - reason: The text of the biometric prompt.
    ///   - sessionDurationMinutes: Asks for a shorter session than the server's default.
    ///   - pinFallback: Asks the user for the app PIN.
    /// - Throws: ``BiometricLoginError``: `.notEnabled` when there is no enrolment or its key is gone,
    ///   `.registrationRevoked` (local state has been deleted), `.registrationLocked`, prompt outcomes, the PIN codes,
    ///   `.server`, `.transport`.
    public func login(
        reason: String,
        sessionDurationMinutes: Int? = nil,
        pinFallback: PinProvider? = nil
    ) async throws -> TouchstoneSession {
        let enrollment = try await self.requireEnrollmentWithKey()
        do {
            let grant = try await self.client.startAuthentication(registrationId: enrollment.registrationId)
            let verification: UserVerification
            do {
                verification = try await self.verifier.verifyUser(reason: reason)
            } catch let error as BiometricLoginError
                where (error.code == .userFallback || error.code == .lockedOut) && pinFallback != nil && enrollment.pinSet == true
            {
                return try await self.pinLoop(enrollment, trigger: error, sessionDurationMinutes: sessionDurationMinutes, ask: pinFallback!)
            }
            let signature = try await self.sign(Array(grant.challenge.utf8), with: enrollment, verification: verification)
            let session = try await self.client.finishAuthentication(
                registrationId: enrollment.registrationId,
                challenge: grant.challenge,
                signature: signature,
                sessionDurationMinutes: sessionDurationMinutes
            )
            return try await self.bound(session, enrollment)
        } catch let error as BiometricLoginError {
            throw try await self.handleLoginError(error, enrollment: enrollment)
        }
    }

    /// Asks for the PIN until it is accepted, the user gives up, or the server refuses for another reason.
    private func pinLoop(
        _ enrollment: LocalEnrollment,
        trigger: BiometricLoginError,
        sessionDurationMinutes: Int?,
        ask: PinProvider
    ) async throws -> TouchstoneSession {
        var previous: BiometricLoginError?
        var attempt = 1
        while true {
            guard let pin = await ask(PinRequest(trigger: trigger.code, attempt: attempt, previousError: previous)) else {
                throw trigger
            }
            do {
                let session = try await self.client.pinAuthentication(
                    registrationId: enrollment.registrationId,
                    pin: pin,
                    sessionDurationMinutes: sessionDurationMinutes
                )
                return try await self.bound(session, enrollment)
            } catch let error as BiometricLoginError where error.code == .pinIncorrect {
                previous = error
                attempt += 1
            } catch let error as BiometricLoginError where error.serverCode == "invalid_request" {
                // Not 4 to 8 digits: the server did not count it; ask again.
                previous = error
                attempt += 1
            }
        }
    }

    /// What a failed login leaves behind: a revoked or unknown registration is forgotten; a PIN the server does not
    /// have is marked unset.
    func handleLoginError(_ error: BiometricLoginError, enrollment: LocalEnrollment) async throws -> BiometricLoginError {
        if error.code == .registrationRevoked {
            try await self.forgetLocalEnrollment(enrollment)
            return error
        }
        if error.serverCode == "registration_not_found" {
            try await self.forgetLocalEnrollment(enrollment)
            return BiometricLoginError(.registrationRevoked, error.message, serverCode: error.serverCode, httpStatus: error.httpStatus)
        }
        if error.code == .pinNotSet {
            var updated = enrollment
            updated.pinSet = false
            try await self.stateStore.saveEnrollment(updated)
        }
        return error
    }

    // MARK: Helpers

    /// Signs `message` with the enrolled key after `verification`. When the key store reports the key invalidated
    /// (the biometric enrolment changed: the key is unusable for good) the server is told and local state forgotten.
    func sign(_ message: [UInt8], with enrollment: LocalEnrollment, verification: UserVerification) async throws -> [UInt8] {
        do {
            return try await self.keyStoreCall {
                try await self.keyStore.sign(message, withKey: enrollment.keyTag, verification: verification)
            }
        } catch let error as BiometricLoginError where error.code == .keyInvalidated {
            await self.reportInvalidation(of: enrollment, reason: "biometry_changed")
            try await self.forgetLocalEnrollment(enrollment)
            throw error
        }
    }

    /// The enrolment, or `.notEnabled`; a key that vanished (app data restored to another device, keychain reset...)
    /// is reported to the server and the local state forgotten, so the user can start over.
    func requireEnrollmentWithKey() async throws -> LocalEnrollment {
        guard let enrollment = try await self.stateStore.loadEnrollment() else {
            throw BiometricLoginError(.notEnabled, "biometric sign-in is not enabled on this device")
        }
        guard await self.keyStore.keyExists(tag: enrollment.keyTag) else {
            await self.reportInvalidation(of: enrollment, reason: "key_lost")
            try await self.stateStore.clearEnrollment()
            throw BiometricLoginError(.notEnabled, "the device key no longer exists; enable biometric sign-in again")
        }
        return enrollment
    }

    /// The App Attest proof for enrolling `publicKey`: attests this installation's key first if needed, then asserts
    /// over "<challenge>.<publicKey as sent>". `nil` without a provider or on a device without App Attest.
    func appAttestProof(for publicKey: DeviceKeyPublicKey) async throws -> AppAttestProof? {
        guard let appAttest = self.appAttest, await appAttest.isSupported else { return nil }
        do {
            let keyId: String
            if let stored = try await self.stateStore.appAttestKeyId() {
                keyId = stored
            } else {
                keyId = try await appAttest.generateKey()
                let challenge = try await self.client.appAttestChallenge()
                let attestation = try await appAttest.attestKey(keyId, clientDataHash: Self.sha256(Array(challenge.utf8)))
                try await self.client.registerAppAttestKey(keyId: keyId, attestation: attestation, challenge: challenge)
                try await self.stateStore.saveAppAttestKeyId(keyId)
            }
            let challenge = try await self.client.appAttestChallenge()
            let clientData = Array("\(challenge).\(TouchstoneClient.encodedPublicKey(publicKey))".utf8)
            let assertion = try await appAttest.generateAssertion(keyId, clientDataHash: Self.sha256(clientData))
            return AppAttestProof(keyId: keyId, challenge: challenge, assertion: assertion)
        } catch let error as BiometricLoginError {
            throw error
        } catch {
            throw BiometricLoginError(.internalFailure, "App Attest failed: \(error)")
        }
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    func requireDeviceAvailable() async throws {
        switch await self.verifier.availability() {
        case .available: return
        case .notAvailable: throw BiometricLoginError(.notAvailable, "this device has no usable biometrics")
        case .notEnrolled: throw BiometricLoginError(.notEnrolled, "no biometrics are enrolled on this device")
        case .passcodeNotSet: throw BiometricLoginError(.passcodeNotSet, "set a device passcode to use biometric sign-in")
        case .lockedOut: throw BiometricLoginError(.lockedOut, "biometrics are locked; unlock the device with its passcode")
        }
    }

    /// Best effort: a server that cannot be reached keeps an active registration whose key no longer exists, which
    /// nobody can use; the user can delete it from the device list.
    func reportInvalidation(of enrollment: LocalEnrollment, reason: String) async {
        guard let deviceId = try? await self.stateStore.deviceId() else { return }
        try? await self.client.invalidateRegistration(id: enrollment.registrationId, deviceId: deviceId, reason: reason)
    }

    func forgetLocalEnrollment(_ enrollment: LocalEnrollment) async throws {
        try? await self.keyStore.deleteKey(tag: enrollment.keyTag)
        if let proofTag = enrollment.proofKeyTag { try? await self.proofKeyStore?.deleteProofKey(tag: proofTag) }
        try? await self.credentialStore?.clearDeviceCredential()
        try await self.stateStore.clearEnrollment()
    }

    /// Runs a key store operation, reporting foreign errors as `.internalFailure`.
    func keyStoreCall<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as BiometricLoginError {
            throw error
        } catch {
            throw BiometricLoginError(.internalFailure, "key store failure: \(error)")
        }
    }

    static func enableError(_ error: any Error) -> any Error {
        if let error = error as? BiometricLoginError, error.serverCode == "device_enrolled_for_another_user" {
            return BiometricLoginError(
                .enabledForAnotherAccount,
                error.message,
                serverCode: error.serverCode,
                httpStatus: error.httpStatus
            )
        }
        return error
    }
}
