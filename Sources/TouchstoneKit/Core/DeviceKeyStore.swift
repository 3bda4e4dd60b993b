public import TouchstoneCrypto

/// When the operating system lets a device key be used.
public enum KeyAccessPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Biometrics of the currently enrolled set only: adding a fingerprint or re-enrolling Face ID invalidates the key.
    case biometryCurrentSet
    /// Any enrolled biometrics, including ones added later.
    case biometryAny
    /// Biometrics or the device passcode.
    case userPresence
}

/// The public half of a key a ``DeviceKeyStore`` created, in the encoding the store produces.
public struct DeviceKeyPublicKey: Sendable, Hashable {
    public var algorithm: SignatureAlgorithm
    /// X9.63 point for ES256, 32 raw bytes for EdDSA, SubjectPublicKeyInfo or PKCS#1 DER for RS256: the server
    /// accepts all of these.
    public var bytes: [UInt8]

    public init(algorithm: SignatureAlgorithm, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }
}

/// Where device private keys live: the Secure Enclave, the Keychain, or (on Linux and in tests) software.
///
/// A private key never leaves its store; the SDK asks the store to sign. Implementations throw
/// ``BiometricLoginError`` (for example `.userCancelled` when the OS prompt is dismissed during ``sign(_:withKey:verification:)``).
public protocol DeviceKeyStore: Sendable {
    /// Algorithms this store can create keys for (a Secure Enclave supports only ES256).
    var supportedAlgorithms: [SignatureAlgorithm] { get }

    /// Creates a key pair under `tag`, replacing nothing: creating over an existing tag is an error.
    func createKey(tag: String, algorithm: SignatureAlgorithm, policy: KeyAccessPolicy) async throws -> DeviceKeyPublicKey

    /// Signs `message` with the key under `tag`. `verification` is what the ``UserVerifier`` returned, so a store can
    /// reuse an already-evaluated authentication context instead of prompting twice.
    func sign(_ message: [UInt8], withKey tag: String, verification: UserVerification) async throws -> [UInt8]

    /// Deletes the key; deleting a missing key is not an error.
    func deleteKey(tag: String) async throws

    /// Whether a key exists under `tag`. Never prompts the user.
    func keyExists(tag: String) async -> Bool
}
