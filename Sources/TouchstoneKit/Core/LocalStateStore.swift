public import TouchstoneCrypto

/// What the app remembers about its biometric enrolment. Nothing here is secret: keep it outside biometric protection
/// so that checking state or cleaning up never shows a prompt.
public struct LocalEnrollment: Sendable, Hashable, Codable {
    public var userId: String
    public var registrationId: String
    /// The tag of the private key in the ``DeviceKeyStore``.
    public var keyTag: String
    public var algorithm: SignatureAlgorithm
    /// The account's email, for display ("Sign in as ...").
    public var email: String?
    /// Whether an app PIN was set for this registration through this SDK (nil: never; stored by older versions).
    public var pinSet: Bool?
    /// The tag of the proof key (DPoP) in the ``ProofKeyStore`` that the sessions of this enrolment's sign-ins are
    /// bound to (nil: none, an enrolment by an older version or a key store without proof keys).
    public var proofKeyTag: String?

    public init(userId: String, registrationId: String, keyTag: String, algorithm: SignatureAlgorithm, email: String?) {
        self.userId = userId
        self.registrationId = registrationId
        self.keyTag = keyTag
        self.algorithm = algorithm
        self.email = email
    }
}

/// Persistence of the local enrolment and of the device's stable identifier.
public protocol LocalStateStore: Sendable {
    func loadEnrollment() async throws -> LocalEnrollment?
    func saveEnrollment(_ enrollment: LocalEnrollment) async throws
    func clearEnrollment() async throws
    /// A stable identifier for this installation, created on first use and kept across enable/disable.
    func deviceId() async throws -> String
    /// The App Attest key id this installation attested with the server, if any (kept across enable/disable).
    func appAttestKeyId() async throws -> String?
    func saveAppAttestKeyId(_ keyId: String?) async throws
}

/// Where the device credential of this installation's registration is kept (issue #34): the secret that lets the app
/// read sign-in requests waiting for approval without a biometric prompt. Keep it out of biometric protection (the
/// app reads it when a push arrives) but on this device only: ``KeychainDeviceCredentialStore`` on Apple platforms,
/// ``FileStateStore`` (a mode-0600 file) elsewhere.
public protocol DeviceCredentialStore: Sendable {
    /// The stored credential, if it belongs to `registrationId`.
    func loadDeviceCredential(registrationId: String) async throws -> String?
    func saveDeviceCredential(_ credential: String, registrationId: String) async throws
    func clearDeviceCredential() async throws
}

/// A stored device credential and the registration it belongs to.
struct StoredDeviceCredential: Codable {
    var registrationId: String
    var credential: String
}
