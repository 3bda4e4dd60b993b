public import Crypto

/// Encryption of stored secrets (the token-signing private keys) under a key-encryption key: AES-256-GCM with a
/// random 96-bit nonce and the secret's identifier as associated data, so a sealed value moved to another identifier
/// does not open.
///
/// Format: `0x01` (version) ‖ nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes).
public enum KeySealing {
    /// Why a sealed value cannot be opened.
    public enum Failure: Error, Hashable, Sendable {
        /// Not of the format above.
        case malformed
        /// The tag does not verify: another key-encryption key, another identifier, or altered bytes.
        case authenticationFailed
    }

    static let version: UInt8 = 1

    /// Seals `plaintext`; `context` (the kid) must be given again to open it.
    public static func seal(_ plaintext: [UInt8], key: SymmetricKey, context: [UInt8]) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: context)
        guard let combined = box.combined else { throw Failure.malformed }
        return [Self.version] + Array(combined)
    }

    /// Opens a value made by ``seal(_:key:context:)``.
    public static func open(_ sealed: [UInt8], key: SymmetricKey, context: [UInt8]) throws(Failure) -> [UInt8] {
        guard sealed.count > 1 + 12 + 16, sealed[0] == Self.version else { throw .malformed }
        guard let box = try? AES.GCM.SealedBox(combined: sealed[1...]) else { throw .malformed }
        guard let plaintext = try? AES.GCM.open(box, using: key, authenticating: context) else { throw .authenticationFailed }
        return Array(plaintext)
    }
}
