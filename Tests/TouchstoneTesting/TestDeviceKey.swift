public import Foundation
public import TouchstoneCrypto
public import Crypto
import _CryptoExtras

/// A device key pair for tests, able to present its public key and signatures in every encoding clients use.
public struct TestDeviceKey: Sendable {
    public enum KeyEncoding: String, Sendable, CaseIterable {
        case spkiDER, spkiPEM, x963, compressed, raw, pkcs1DER, pkcs1PEM
    }

    public enum SignatureEncoding: String, Sendable, CaseIterable {
        case der, raw
    }

    private enum Key: Sendable {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    public let algorithm: SignatureAlgorithm
    private let key: Key

    public init(_ algorithm: SignatureAlgorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .es256: self.key = .p256(P256.Signing.PrivateKey())
        case .eddsa: self.key = .ed25519(Curve25519.Signing.PrivateKey())
        case .rs256: self.key = .rsa(try! _RSA.Signing.PrivateKey(keySize: .bits2048))
        }
    }

    /// The P-256 public key of an ES256 key (what a Keystore attestation certificate certifies), nil otherwise.
    public var p256PublicKey: P256.Signing.PublicKey? {
        if case .p256(let key) = self.key { return key.publicKey }
        return nil
    }

    /// The encodings that exist for this algorithm.
    public var keyEncodings: [KeyEncoding] {
        switch self.algorithm {
        case .es256: [.spkiDER, .spkiPEM, .x963, .compressed]
        case .eddsa: [.raw, .spkiDER, .spkiPEM]
        case .rs256: [.spkiDER, .spkiPEM, .pkcs1DER, .pkcs1PEM]
        }
    }

    /// The public key as bytes in `encoding` (PEM encodings as their UTF-8 text).
    public func publicKeyBytes(_ encoding: KeyEncoding) -> [UInt8] {
        switch (self.key, encoding) {
        case (.p256(let key), .spkiDER): [UInt8](key.publicKey.derRepresentation)
        case (.p256(let key), .spkiPEM): Array(key.publicKey.pemRepresentation.utf8)
        case (.p256(let key), .x963): [UInt8](key.publicKey.x963Representation)
        case (.p256(let key), .compressed): [UInt8](key.publicKey.compressedRepresentation)
        case (.ed25519(let key), .raw): [UInt8](key.publicKey.rawRepresentation)
        case (.ed25519(let key), .spkiDER): Self.ed25519SPKI(key)
        case (.ed25519(let key), .spkiPEM): Array(Self.pem("PUBLIC KEY", Self.ed25519SPKI(key)).utf8)
        case (.rsa(let key), .spkiDER): [UInt8](key.publicKey.derRepresentation)
        case (.rsa(let key), .spkiPEM): Array(key.publicKey.pemRepresentation.utf8)
        case (.rsa(let key), .pkcs1DER): [UInt8](key.publicKey.pkcs1DERRepresentation)
        case (.rsa(let key), .pkcs1PEM): Array(key.publicKey.pkcs1PEMRepresentation.utf8)
        default: preconditionFailure("\(encoding) does not exist for \(self.algorithm)")
        }
    }

    /// The public key as the API takes it: PEM text as is, binary encodings as base64url (or standard base64).
    public func publicKey(_ encoding: KeyEncoding? = nil, standardBase64: Bool = false) -> String {
        let encoding = encoding ?? self.keyEncodings[0]
        let bytes = self.publicKeyBytes(encoding)
        if encoding == .spkiPEM || encoding == .pkcs1PEM { return String(decoding: bytes, as: UTF8.self) }
        return standardBase64 ? Data(bytes).base64EncodedString() : Base64.urlEncode(bytes)
    }

    /// Signs the UTF-8 bytes of `challenge`.
    public func signature(over challenge: String, encoding: SignatureEncoding = .der) -> [UInt8] {
        self.signature(overBytes: Array(challenge.utf8), encoding: encoding)
    }

    public func signature(overBytes message: [UInt8], encoding: SignatureEncoding = .der) -> [UInt8] {
        switch self.key {
        case .p256(let key):
            let signature = try! key.signature(for: message)
            return encoding == .der ? [UInt8](signature.derRepresentation) : [UInt8](signature.rawRepresentation)
        case .ed25519(let key):
            return [UInt8](try! key.signature(for: message))
        case .rsa(let key):
            return [UInt8](try! key.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation)
        }
    }

    /// A base64url signature over `challenge`, as the API takes it.
    public func signed(_ challenge: String, encoding: SignatureEncoding = .der) -> String {
        Base64.urlEncode(self.signature(over: challenge, encoding: encoding))
    }

    private static func ed25519SPKI(_ key: Curve25519.Signing.PrivateKey) -> [UInt8] {
        [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + [UInt8](key.publicKey.rawRepresentation)
    }

    public static func pem(_ label: String, _ der: [UInt8]) -> String {
        let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
    }
}
