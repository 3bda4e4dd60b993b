import Crypto
import Foundation
import TouchstoneCrypto
import _CryptoExtras

/// COSE signature algorithm identifiers (IANA COSE Algorithms registry) that WebAuthn credentials use.
public enum COSEAlgorithm: Int, Sendable, Hashable, CaseIterable, Codable {
    case es256 = -7
    case es384 = -35
    case es512 = -36
    case eddsa = -8
    case rs256 = -257
    case ps256 = -37
    case ps384 = -38
    case ps512 = -39
    case rs384 = -258
    case rs512 = -259
    /// RSASSA-PKCS1-v1_5 with SHA-1: broken; only for old TPMs, and only when explicitly allowed.
    case rs1 = -65535

    /// The JOSE-style name (ES256, EdDSA...).
    public var name: String {
        switch self {
        case .es256: "ES256"
        case .es384: "ES384"
        case .es512: "ES512"
        case .eddsa: "EdDSA"
        case .rs256: "RS256"
        case .ps256: "PS256"
        case .ps384: "PS384"
        case .ps512: "PS512"
        case .rs384: "RS384"
        case .rs512: "RS512"
        case .rs1: "RS1"
        }
    }

    /// RSA algorithms (RFC 8812 §2: RSASSA-PKCS1-v1_5; RFC 8230 §2: RSASSA-PSS).
    public var isRSA: Bool {
        switch self {
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .rs1: true
        default: false
        }
    }

    /// The safe default set: what browsers and authenticators use (the rarer SHA-384/512 RSA variants and RS1 only when
    /// configured).
    public static let recommended: [COSEAlgorithm] = [.es256, .eddsa, .es384, .es512, .ps256, .rs256]
}

/// A verifier for one public key and one signature algorithm, whatever it came from (a COSE key or a certificate).
struct SignatureVerifier: Sendable {
    enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    let key: Key
    let algorithm: COSEAlgorithm

    /// Verifies a WebAuthn signature: ECDSA signatures are DER (X9.62; parsed by ``ECDSASignatureEncoding``, a third of
    /// swift-crypto's DER parse), EdDSA 64 bytes, RSA the modulus length.
    func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch (self.key, self.algorithm) {
        case (.p256(let key), .es256):
            guard let raw = ECDSASignatureEncoding.rawFromDER(signature, scalarLength: 32),
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: raw)
            else { return false }
            return key.isValidSignature(parsed, for: data)
        case (.p384(let key), .es384):
            guard let raw = ECDSASignatureEncoding.rawFromDER(signature, scalarLength: 48),
                let parsed = try? P384.Signing.ECDSASignature(rawRepresentation: raw)
            else { return false }
            return key.isValidSignature(parsed, for: data)
        case (.p521(let key), .es512):
            guard let raw = ECDSASignatureEncoding.rawFromDER(signature, scalarLength: 66),
                let parsed = try? P521.Signing.ECDSASignature(rawRepresentation: raw)
            else { return false }
            return key.isValidSignature(parsed, for: data)
        case (.ed25519(let key), .eddsa):
            return signature.count == 64 && key.isValidSignature(signature, for: data)
        case (.rsa(let key), .rs256):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), .ps256):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA256.hash(data: data), padding: .PSS)
        case (.rsa(let key), .ps384):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA384.hash(data: data), padding: .PSS)
        case (.rsa(let key), .ps512):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA512.hash(data: data), padding: .PSS)
        case (.rsa(let key), .rs384):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA384.hash(data: data), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), .rs512):
            return key.isValidSignature(.init(rawRepresentation: signature), for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), .rs1):
            return key.isValidSignature(.init(rawRepresentation: signature), for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5)
        default:
            return false
        }
    }
}

/// A credential public key in COSE_Key form (RFC 9052 §7, RFC 9053), as found in attested credential data.
public struct COSEKey: Sendable, Hashable {
    /// COSE key types.
    enum KeyType: Int {
        case okp = 1
        case ec2 = 2
        case rsa = 3
    }

    public let algorithm: COSEAlgorithm
    /// The CBOR the key was parsed from.
    public let cbor: CBOR
    let verifier: SignatureVerifier

    /// Parses the CBOR encoding of a COSE key.
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        let item: CBOR
        do {
            item = try CBORDecoder().decode(bytes)
        } catch {
            throw .malformed("COSE key is not CBOR: \(error.reason)")
        }
        try self.init(item)
    }

    public init(_ item: CBOR) throws(WebAuthnError) {
        guard let map = item.mapValue else { throw .malformed("COSE key is not a map") }
        guard let kty = map[int: 1]?.intValue, let keyType = KeyType(rawValue: kty) else {
            throw WebAuthnError(.unsupportedKey, "unsupported COSE key type")
        }
        guard let alg = map[int: 3]?.intValue, let algorithm = COSEAlgorithm(rawValue: alg) else {
            throw WebAuthnError(.unsupportedKey, "unsupported COSE algorithm \(map[int: 3]?.intValue.map(String.init) ?? "missing")")
        }
        self.algorithm = algorithm
        self.cbor = item
        do {
            switch (keyType, algorithm) {
            case (.ec2, .es256), (.ec2, .es384), (.ec2, .es512):
                let (curve, size) = algorithm == .es256 ? (1, 32) : algorithm == .es384 ? (2, 48) : (3, 66)
                guard map[int: -1]?.intValue == curve else { throw WebAuthnError(.unsupportedKey, "curve does not match \(algorithm.name)") }
                guard let x = map[int: -2]?.bytesValue, let y = map[int: -3]?.bytesValue, x.count == size, y.count == size else {
                    throw WebAuthnError(.unsupportedKey, "EC2 coordinates must be \(size) bytes each")
                }
                let point = [0x04] + x + y
                switch algorithm {
                case .es256: self.verifier = .init(key: .p256(try P256.Signing.PublicKey(x963Representation: point)), algorithm: algorithm)
                case .es384: self.verifier = .init(key: .p384(try P384.Signing.PublicKey(x963Representation: point)), algorithm: algorithm)
                default: self.verifier = .init(key: .p521(try P521.Signing.PublicKey(x963Representation: point)), algorithm: algorithm)
                }
            case (.okp, .eddsa):
                guard map[int: -1]?.intValue == 6 else { throw WebAuthnError(.unsupportedKey, "only the Ed25519 OKP curve is supported") }
                guard let x = map[int: -2]?.bytesValue, x.count == 32 else {
                    throw WebAuthnError(.unsupportedKey, "an Ed25519 key is 32 bytes")
                }
                do {
                    try Ed25519KeyValidation.validate(x)
                } catch {
                    throw WebAuthnError(.unsupportedKey, "invalid EdDSA public key: \(error.description)")
                }
                self.verifier = .init(key: .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x)), algorithm: algorithm)
            case (.rsa, _) where algorithm.isRSA:
                guard let n = map[int: -1]?.bytesValue, let e = map[int: -2]?.bytesValue, !n.isEmpty, !e.isEmpty, e.count <= 4 else {
                    throw WebAuthnError(.unsupportedKey, "RSA key needs n and e")
                }
                do {
                    try DevicePublicKey.checkRSA(modulus: n, exponent: e)
                } catch {
                    throw WebAuthnError(.unsupportedKey, "invalid RSA public key: \(error.reason)")
                }
                self.verifier = .init(key: .rsa(try _RSA.Signing.PublicKey(n: n, e: e)), algorithm: algorithm)
            default:
                throw WebAuthnError(.unsupportedKey, "key type \(kty) does not match algorithm \(algorithm.name)")
            }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw WebAuthnError(.unsupportedKey, "invalid \(algorithm.name) public key")
        }
    }

    /// The canonical CBOR encoding of the key.
    public var bytes: [UInt8] { CBOREncoder.encode(self.cbor) }

    /// Whether `signature` is this key's signature over `data`.
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        self.verifier.isValidSignature(signature, for: data)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.cbor == rhs.cbor }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.cbor) }
}
