public import Foundation
public import TouchstoneCrypto
import Crypto
import _CryptoExtras

/// Device keys in software, for Linux, the simulated device of the CLI, and tests.
///
/// With a directory, each key is a file readable by its owner only (mode 0600) in a directory of mode 0700; without
/// one, keys live in memory. There is no hardware protection: on a phone, use the Secure Enclave or Keychain stores.
public actor SoftwareKeyStore: DeviceKeyStore {
    public nonisolated let supportedAlgorithms: [SignatureAlgorithm] = SignatureAlgorithm.allCases

    private struct StoredKey: Codable {
        var algorithm: SignatureAlgorithm
        /// Raw scalar (ES256), raw seed (EdDSA) or PKCS#1 DER (RS256), base64url.
        var privateKey: String
    }

    private let directory: URL?
    private var memory: [String: StoredKey] = [:]
    /// Keys made unusable by ``invalidateKey(tag:)``, as the OS does when biometric enrolment changes.
    private var invalidated: Set<String> = []
    /// Proof keys already read, by their stored tag: a proof key signs every request of a bound session, and reading a key (its
    /// file, its base64, the public point computed from the scalar) cost more than the signature.
    private var proofKeys: [String: P256.Signing.PrivateKey] = [:]
    /// ES256 signatures in DER (as `SecKeyCreateSignature`) or raw `r‖s` (as CryptoKit).
    private let ecdsaSignatureFormat: ECDSASignatureFormat

    public enum ECDSASignatureFormat: Sendable {
        case der
        case raw
    }

    /// A store keeping keys in memory.
    public init(ecdsaSignatureFormat: ECDSASignatureFormat = .der) {
        self.directory = nil
        self.ecdsaSignatureFormat = ecdsaSignatureFormat
    }

    /// A store keeping each key in a file under `directory` (created with mode 0700 if needed).
    public init(directory: URL, ecdsaSignatureFormat: ECDSASignatureFormat = .der) throws {
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        self.directory = directory
        self.ecdsaSignatureFormat = ecdsaSignatureFormat
    }

    public func createKey(tag: String, algorithm: SignatureAlgorithm, policy: KeyAccessPolicy) async throws
        -> DeviceKeyPublicKey
    {
        guard try self.load(tag) == nil else {
            throw BiometricLoginError(.internalFailure, "a key with tag \(tag) already exists")
        }
        let stored: StoredKey
        let publicKey: [UInt8]
        switch algorithm {
        case .es256:
            let key = P256.Signing.PrivateKey()
            stored = StoredKey(algorithm: algorithm, privateKey: Base64.urlEncode(key.rawRepresentation))
            publicKey = [UInt8](key.publicKey.x963Representation)
        case .eddsa:
            let key = Curve25519.Signing.PrivateKey()
            stored = StoredKey(algorithm: algorithm, privateKey: Base64.urlEncode(key.rawRepresentation))
            publicKey = [UInt8](key.publicKey.rawRepresentation)
        case .rs256:
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            stored = StoredKey(algorithm: algorithm, privateKey: Base64.urlEncode(key.derRepresentation))
            publicKey = [UInt8](key.publicKey.derRepresentation)
        }
        try self.save(stored, tag: tag)
        return DeviceKeyPublicKey(algorithm: algorithm, bytes: publicKey)
    }

    public func sign(_ message: [UInt8], withKey tag: String, verification: UserVerification) async throws -> [UInt8] {
        guard let stored = try self.load(tag), let privateBytes = Base64.decode(stored.privateKey) else {
            throw BiometricLoginError(.notEnabled, "no device key with tag \(tag)")
        }
        guard !self.invalidated.contains(tag) else {
            throw BiometricLoginError(.keyInvalidated, "the key was invalidated by a change of biometric enrolment")
        }
        switch stored.algorithm {
        case .es256:
            let signature = try P256.Signing.PrivateKey(rawRepresentation: privateBytes).signature(for: message)
            switch self.ecdsaSignatureFormat {
            case .der: return [UInt8](signature.derRepresentation)
            case .raw: return [UInt8](signature.rawRepresentation)
            }
        case .eddsa:
            return [UInt8](try Curve25519.Signing.PrivateKey(rawRepresentation: privateBytes).signature(for: message))
        case .rs256:
            let key = try _RSA.Signing.PrivateKey(derRepresentation: privateBytes)
            return [UInt8](try key.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation)
        }
    }

    /// Simulates what iOS does to a `biometryCurrentSet` key when a fingerprint or face is added: the key still
    /// exists but can never sign again.
    public func invalidateKey(tag: String) {
        self.invalidated.insert(tag)
    }

    public func deleteKey(tag: String) async throws {
        self.invalidated.remove(tag)
        self.proofKeys[tag] = nil
        if let url = self.fileURL(tag) {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        } else {
            self.memory[tag] = nil
        }
    }

    public func keyExists(tag: String) async -> Bool {
        (try? self.load(tag)) != nil
    }

    // MARK: Storage

    private func fileURL(_ tag: String) -> URL? {
        guard let directory else { return nil }
        // Tags become file names: keep only a safe alphabet.
        let safe = String(tag.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-" ? Character($0) : "_" })
        return directory.appendingPathComponent("\(safe).key.json")
    }

    /// The P-256 private key under `tag`, if it is one.
    func p256Key(_ tag: String) throws -> P256.Signing.PrivateKey? {
        guard let stored = try self.load(tag), stored.algorithm == .es256, let bytes = Base64.decode(stored.privateKey) else { return nil }
        return try P256.Signing.PrivateKey(rawRepresentation: bytes)
    }

    private func load(_ tag: String) throws -> StoredKey? {
        guard let url = self.fileURL(tag) else { return self.memory[tag] }
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(StoredKey.self, from: Data(contentsOf: url))
    }

    private func save(_ key: StoredKey, tag: String) throws {
        guard let url = self.fileURL(tag) else {
            self.memory[tag] = key
            return
        }
        try writePrivateFile(JSONEncoder().encode(key), to: url)
    }
}

/// Proof keys (DPoP, issue #43) beside the device keys, under `<tag>.proof`: P-256, signing without any prompt.
extension SoftwareKeyStore: ProofKeyStore {
    public func createProofKey(tag: String) async throws -> ProofKeyPublicKey {
        let created = try await self.createKey(tag: Self.proofTag(tag), algorithm: .es256, policy: .userPresence)
        return ProofKeyPublicKey(x963: created.bytes)
    }

    public func proofKeyPublicKey(tag: String) async throws -> ProofKeyPublicKey? {
        guard let key = try self.p256Key(Self.proofTag(tag)) else { return nil }
        return ProofKeyPublicKey(x963: [UInt8](key.publicKey.x963Representation))
    }

    public func signWithProofKey(_ message: [UInt8], tag: String) async throws -> [UInt8] {
        let stored = Self.proofTag(tag)
        let key: P256.Signing.PrivateKey
        if let known = self.proofKeys[stored] {
            key = known
        } else {
            guard let loaded = try self.p256Key(stored) else {
                throw BiometricLoginError(.notEnabled, "no proof key with tag \(tag)")
            }
            self.proofKeys[stored] = loaded
            key = loaded
        }
        return [UInt8](try key.signature(for: message).rawRepresentation)
    }

    public func deleteProofKey(tag: String) async throws {
        try await self.deleteKey(tag: Self.proofTag(tag))
    }

    private static func proofTag(_ tag: String) -> String { "\(tag).proof" }
}

/// Writes `data` to `url` atomically with mode 0600 (the file never exists with wider permissions).
func writePrivateFile(_ data: Data, to url: URL) throws {
    let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
    guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
        throw BiometricLoginError(.internalFailure, "cannot write \(url.path)")
    }
    if FileManager.default.fileExists(atPath: url.path) {
        _ = try FileManager.default.replaceItemAt(url, withItemAt: temporary)
    } else {
        try FileManager.default.moveItem(at: temporary, to: url)
    }
}
