import Crypto
import _CryptoExtras
public import Foundation

/// A device's public key, parsed from any of the encodings real clients produce, and able to verify signatures.
///
/// Accepted encodings per algorithm:
/// - ``SignatureAlgorithm/es256``: SubjectPublicKeyInfo DER or PEM, or the X9.63 point (`04‖X‖Y`, what
///   `SecKeyCopyExternalRepresentation` returns; the 33-byte compressed form too).
/// - ``SignatureAlgorithm/eddsa``: the raw 32-byte key, or SubjectPublicKeyInfo DER or PEM.
/// - ``SignatureAlgorithm/rs256``: SubjectPublicKeyInfo DER or PEM, or PKCS#1 `RSAPublicKey` DER or PEM; at least 2048
///   bits, at most 8192, with an odd public exponent of at least 65537.
///
/// Keys are compared and stored in one canonical form, ``spkiDERRepresentation``, so that the same key sent in two
/// encodings is recognised as the same key.
///
/// ```swift
/// let key = try DevicePublicKey(encoded: request.publicKey, algorithm: .es256)
/// guard key.isValidSignature(signature, for: Array(challenge.utf8)) else { ... }
/// ```
public struct DevicePublicKey: Sendable, Hashable {
    private enum Backing: Sendable {
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey, modulusByteCount: Int)
    }

    /// Upper bound on any encoded key accepted (an 8192-bit RSA SPKI in PEM is under 1,600 bytes).
    public static let maxEncodedLength = 4096

    /// The algorithm this key verifies.
    public let algorithm: SignatureAlgorithm
    /// The canonical SubjectPublicKeyInfo DER encoding of the key.
    public let spkiDERRepresentation: [UInt8]
    private let backing: Backing

    /// Parses a key from text: a PEM document, or base64 / base64url of any binary encoding listed above.
    ///
    /// - Throws: ``DeviceKeyError`` describing why the key is unusable.
    public init(encoded text: String, algorithm: SignatureAlgorithm) throws(DeviceKeyError) {
        guard text.utf8.count <= Self.maxEncodedLength * 2 else {
            throw .invalidEncoding("public key is longer than \(Self.maxEncodedLength) bytes")
        }
        if text.contains("-----BEGIN") {
            guard let (_, der) = PEM.decode(text) else { throw .invalidEncoding("malformed PEM document") }
            try self.init(bytes: der, algorithm: algorithm)
        } else {
            guard let bytes = Base64.decode(text, maxDecodedLength: Self.maxEncodedLength) else {
                throw .invalidEncoding("public key is not valid base64 or PEM")
            }
            try self.init(bytes: bytes, algorithm: algorithm)
        }
    }

    /// Parses a key from its binary encoding.
    ///
    /// - Throws: ``DeviceKeyError`` describing why the key is unusable.
    public init(bytes: [UInt8], algorithm: SignatureAlgorithm) throws(DeviceKeyError) {
        guard !bytes.isEmpty else { throw .invalidPublicKey("public key is empty") }
        guard bytes.count <= Self.maxEncodedLength else {
            throw .invalidPublicKey("public key is longer than \(Self.maxEncodedLength) bytes")
        }
        self.algorithm = algorithm
        switch algorithm {
        case .es256:
            let point = try Self.ecPoint(from: bytes)
            let key: P256.Signing.PublicKey
            do {
                switch point.count {
                case 65: key = try P256.Signing.PublicKey(x963Representation: point)
                case 33: key = try P256.Signing.PublicKey(compressedRepresentation: point)
                default: throw DeviceKeyError.invalidPublicKey("a P-256 point is 65 bytes (or 33 compressed)")
                }
            } catch let error as DeviceKeyError {
                throw error
            } catch {
                throw .invalidPublicKey("not a point on the P-256 curve")
            }
            self.backing = .p256(key)
            self.spkiDERRepresentation = [UInt8](key.derRepresentation)
        case .eddsa:
            let raw = try Self.ed25519Key(from: bytes)
            // swift-crypto takes any 32 bytes; a device key must be a canonical point of the prime-order subgroup.
            do {
                try Ed25519KeyValidation.validate(raw)
            } catch {
                throw .invalidPublicKey(error.description)
            }
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
                throw .invalidPublicKey("not an Ed25519 public key")
            }
            self.backing = .ed25519(key)
            self.spkiDERRepresentation = SPKI.ed25519Prefix + raw
        case .rs256:
            let (modulus, exponent) = try Self.rsaComponents(from: bytes)
            guard let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent) else {
                throw .invalidPublicKey("the RSA key was rejected")
            }
            self.backing = .rsa(key, modulusByteCount: modulus.count)
            self.spkiDERRepresentation = [UInt8](key.derRepresentation)
        }
    }

    /// A stable identifier of the key: the lowercase hex SHA-256 of ``spkiDERRepresentation``.
    public var fingerprint: String {
        Hex.encode(SHA256.hash(data: self.spkiDERRepresentation))
    }

    /// Returns whether `signature` is a valid signature by this key over `message`.
    ///
    /// ES256 signatures may be DER (X9.62, what `SecKeyCreateSignature` returns) or raw 64-byte `r‖s` (CryptoKit's
    /// `rawRepresentation`); EdDSA signatures are 64 bytes; RS256 signatures are exactly the modulus length.
    public func isValidSignature(_ signature: [UInt8], for message: some DataProtocol) -> Bool {
        self.check(signature, message)
    }

    /// The same for a byte-array message (what the server's finish passes), specialised here: a generic call from
    /// another module would hash the message through unspecialised `DataProtocol` code.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        self.check(signature, message)
    }

    private func check<Message: DataProtocol>(_ signature: [UInt8], _ message: Message) -> Bool {
        switch self.backing {
        case .p256(let key):
            for candidate in ECDSASignatureEncoding.rawCandidates(signature) {
                if let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: candidate),
                    key.isValidSignature(parsed, for: message)
                {
                    return true
                }
            }
            return false
        case .ed25519(let key):
            guard signature.count == 64 else { return false }
            return key.isValidSignature(signature, for: message)
        case .rsa(let key, let modulusByteCount):
            guard signature.count == modulusByteCount else { return false }
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature),
                for: message,
                padding: .insecurePKCS1v1_5
            )
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.algorithm == rhs.algorithm && lhs.spkiDERRepresentation == rhs.spkiDERRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.algorithm)
        hasher.combine(self.spkiDERRepresentation)
    }
}

// MARK: - Format detection

extension DevicePublicKey {
    private static func ecPoint(from bytes: [UInt8]) throws(DeviceKeyError) -> [UInt8] {
        if bytes.first == 0x04 || bytes.first == 0x02 || bytes.first == 0x03, bytes.count == 65 || bytes.count == 33 {
            return bytes
        }
        let spki = try SPKI(bytes, expecting: "an EC P-256 key")
        switch spki.algorithm {
        case .ecP256: return Array(spki.key)
        case .ecOtherCurve: throw .algorithmMismatch("EC key is not on the P-256 curve")
        default: throw .algorithmMismatch("key is not an EC P-256 key")
        }
    }

    private static func ed25519Key(from bytes: [UInt8]) throws(DeviceKeyError) -> [UInt8] {
        if bytes.count == 32 { return bytes }
        let spki = try SPKI(bytes, expecting: "an Ed25519 key")
        guard spki.algorithm == .ed25519 else { throw .algorithmMismatch("key is not an Ed25519 key") }
        guard spki.key.count == 32 else { throw .invalidPublicKey("an Ed25519 key is 32 bytes") }
        return Array(spki.key)
    }

    private static func rsaComponents(from bytes: [UInt8]) throws(DeviceKeyError) -> ([UInt8], [UInt8]) {
        var pkcs1 = bytes[...]
        // An SPKI starts with SEQUENCE { SEQUENCE { OID ... } ... }; PKCS#1 with SEQUENCE { INTEGER ... }.
        if let spki = try? SPKI(bytes, expecting: "an RSA key") {
            guard spki.algorithm == .rsa else { throw .algorithmMismatch("key is not an RSA key") }
            pkcs1 = spki.key
        }
        do {
            var outer = DERReader(pkcs1)
            var sequence = DERReader(try outer.read(.sequence))
            try outer.expectEnd()
            let modulus = try sequence.readUnsignedInteger()
            let exponent = try sequence.readUnsignedInteger()
            try sequence.expectEnd()
            try Self.checkRSA(modulus: modulus, exponent: exponent)
            return (Array(modulus), Array(exponent))
        } catch let error as DeviceKeyError {
            throw error
        } catch {
            throw .invalidPublicKey("not an RSA public key (SPKI or PKCS#1 DER)")
        }
    }

    /// The checks every RSA public key passes before it is accepted, whatever it came in (a device key, a COSE key):
    /// a 2048–8192-bit odd modulus and an odd public exponent of at least 65537 and at most 32 bits.
    ///
    /// - Parameters:
    ///   - modulus: The modulus, big-endian, without leading zero bytes or with them.
    ///   - exponent: The public exponent, big-endian.
    public static func checkRSA(modulus: some Collection<UInt8>, exponent: some Collection<UInt8>) throws(DeviceKeyError) {
        let modulus = ArraySlice(modulus.drop(while: { $0 == 0 }))
        let exponent = ArraySlice(exponent.drop(while: { $0 == 0 }))
        let bits = Self.bitLength(modulus)
        guard bits >= 2048 else { throw DeviceKeyError.weakKey("RSA modulus is \(bits) bits; at least 2048 required") }
        guard bits <= 8192 else { throw DeviceKeyError.invalidPublicKey("RSA modulus over 8192 bits") }
        guard let lastModulusByte = modulus.last, lastModulusByte & 1 == 1 else {
            throw DeviceKeyError.invalidPublicKey("an RSA modulus is odd")
        }
        guard exponent.count <= 4, let last = exponent.last, last & 1 == 1,
            exponent.reduce(0, { ($0 << 8) | Int($1) }) >= 65537
        else {
            throw DeviceKeyError.weakKey("RSA public exponent must be odd, at least 65537 and at most 32 bits")
        }
    }

    private static func bitLength(_ magnitude: ArraySlice<UInt8>) -> Int {
        guard let first = magnitude.first, first != 0 else { return 0 }
        return (magnitude.count - 1) * 8 + (8 - first.leadingZeroBitCount)
    }
}

// MARK: - SubjectPublicKeyInfo

/// The SubjectPublicKeyInfo structure of RFC 5280 §4.1.2.7, reduced to what device keys use.
struct SPKI {
    enum Algorithm: Equatable {
        case ecP256
        case ecOtherCurve
        case ed25519
        case rsa
        case other
    }

    // Object identifier contents (DER, without tag and length).
    static let idECPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]  // 1.2.840.10045.2.1
    static let prime256v1: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]  // 1.2.840.10045.3.1.7
    static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]  // 1.2.840.113549.1.1.1
    static let idEd25519: [UInt8] = [0x2B, 0x65, 0x70]  // 1.3.101.112 (RFC 8410)
    /// SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING (33 bytes) }, followed by the 32 key bytes.
    static let ed25519Prefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]

    let algorithm: Algorithm
    let key: ArraySlice<UInt8>

    init(_ bytes: [UInt8], expecting what: String) throws(DeviceKeyError) {
        do {
            var outer = DERReader(bytes[...])
            var info = DERReader(try outer.read(.sequence))
            try outer.expectEnd()
            var algorithmIdentifier = DERReader(try info.read(.sequence))
            let oid = Array(try algorithmIdentifier.read(.objectIdentifier))
            switch oid {
            case Self.idECPublicKey:
                let curve = Array(try algorithmIdentifier.read(.objectIdentifier))
                self.algorithm = curve == Self.prime256v1 ? .ecP256 : .ecOtherCurve
            case Self.rsaEncryption:
                if !algorithmIdentifier.isAtEnd { _ = try algorithmIdentifier.read(.null) }
                self.algorithm = .rsa
            case Self.idEd25519:
                self.algorithm = .ed25519
            default:
                self.algorithm = .other
            }
            if self.algorithm != .other { try algorithmIdentifier.expectEnd() }
            self.key = try info.readOctetAlignedBitString()
            try info.expectEnd()
        } catch {
            throw .invalidPublicKey("not \(what) in a recognised encoding: \(error.reason)")
        }
    }
}
