public import Foundation
import Crypto
import _CryptoExtras
import TouchstoneCrypto

/// A DPoP proof's public key (its `jwk` header): P-256 (`EC`), Ed25519 (`OKP`) or RSA, public members only.
public struct DPoPPublicKey: Sendable, Hashable {
    /// The RFC 7638 thumbprint's input: the required members in lexicographic order, no white space.
    let canonicalJSON: String
    let key: Key
    /// The JWK SHA-256 thumbprint (RFC 7638), base64url: what `cnf.jkt` and `dpop_jkt` carry. Computed once, with the
    /// key (a verifier keeps keys it has read).
    public let thumbprint: String
    /// The key as swift-crypto verifies with it, made once (a P-256 point's decoding and check cost a few
    /// microseconds a proof otherwise).
    let verifying: VerifyingKey

    enum VerifyingKey: Sendable {
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    public static func == (lhs: DPoPPublicKey, rhs: DPoPPublicKey) -> Bool { lhs.canonicalJSON == rhs.canonicalJSON }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.canonicalJSON) }

    enum Key: Sendable, Hashable {
        case p256(x: [UInt8], y: [UInt8])
        case ed25519([UInt8])
        case rsa(n: [UInt8], e: [UInt8])
    }

    /// Members whose presence means the JWK carries a private key (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2).
    static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Reads a JWK object; refuses private members, unknown key types and curves, and malformed coordinates.
    public init(jwk: [String: Any]) throws(DPoPError) {
        if let member = jwk.keys.first(where: Self.privateMembers.contains) {
            throw DPoPError(.privateKey, "the jwk holds the private member '\(member)'")
        }
        func member(_ name: String) throws(DPoPError) -> String {
            guard let value = jwk[name] as? String, !value.isEmpty else { throw DPoPError(.invalidKey, "the jwk has no '\(name)'") }
            return value
        }
        func bytes(_ name: String) throws(DPoPError) -> [UInt8] {
            guard let decoded = Base64.urlDecodeCanonical(try member(name)) else {
                throw DPoPError(.invalidKey, "the jwk's '\(name)' is not canonical base64url")
            }
            return decoded
        }
        switch try member("kty") {
        case "EC":
            guard try member("crv") == "P-256" else { throw DPoPError(.invalidKey, "the only EC curve accepted is P-256") }
            let (x, y) = (try bytes("x"), try bytes("y"))
            guard x.count == 32, y.count == 32, let point = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y) else {
                throw DPoPError(.invalidKey, "x and y are not a P-256 point")
            }
            self.key = .p256(x: x, y: y)
            self.verifying = .p256(point)
            self.canonicalJSON = #"{"crv":"P-256","kty":"EC","x":"\#(Base64.urlEncode(x))","y":"\#(Base64.urlEncode(y))"}"#
        case "OKP":
            guard try member("crv") == "Ed25519" else { throw DPoPError(.invalidKey, "the only OKP curve accepted is Ed25519") }
            let x = try bytes("x")
            guard x.count == 32, (try? Ed25519KeyValidation.validate(x)) != nil, let point = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else {
                throw DPoPError(.invalidKey, "x is not a valid Ed25519 public key")
            }
            self.key = .ed25519(x)
            self.verifying = .ed25519(point)
            self.canonicalJSON = #"{"crv":"Ed25519","kty":"OKP","x":"\#(Base64.urlEncode(x))"}"#
        case "RSA":
            let (n, e) = (try bytes("n"), try bytes("e"))
            guard n.first != 0, e.first != 0, (2048...8192).contains(n.count * 8), n.last.map({ $0 & 1 == 1 }) == true else {
                throw DPoPError(.invalidKey, "the RSA modulus must be 2048 to 8192 bits, odd, without leading zeros")
            }
            guard let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { throw DPoPError(.invalidKey, "n and e are not an RSA public key") }
            self.key = .rsa(n: n, e: e)
            self.verifying = .rsa(key)
            self.canonicalJSON = #"{"e":"\#(Base64.urlEncode(e))","kty":"RSA","n":"\#(Base64.urlEncode(n))"}"#
        case let other:
            throw DPoPError(.invalidKey, "unsupported key type '\(other.prefix(16))'")
        }
        self.thumbprint = Base64.urlEncode(Array(SHA256.hash(data: Array(self.canonicalJSON.utf8))))
    }

    /// The JWS algorithm this key signs with outside a proof (a registration's proof-key signature): ES256 for P-256
    /// (the raw 64-byte r‖s), EdDSA for Ed25519, RS256 for RSA.
    public var algorithm: String {
        switch self.key {
        case .p256: "ES256"
        case .ed25519: "EdDSA"
        case .rsa: "RS256"
        }
    }

    /// The SubjectPublicKeyInfo DER of a P-256 key (what an attestation certificate names); nil for other keys.
    public var p256SPKI: [UInt8]? {
        guard case .p256(let x, let y) = self.key, let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y) else { return nil }
        return Array(key.derRepresentation)
    }

    /// Whether `signature` is this key's signature over `message` with ``algorithm``.
    public func isValidSignature(_ signature: [UInt8], over message: [UInt8]) -> Bool {
        self.verifies(signature, over: message, alg: self.algorithm)
    }

    /// Whether `signature` is this key's JWS signature with `alg` over `input`; false for an `alg` that does not fit
    /// the key's type.
    func verifies(_ signature: [UInt8], over input: [UInt8], alg: String) -> Bool {
        switch (alg, self.verifying) {
        case ("ES256", .p256(let key)):
            // JWS ES256 is the raw 64-byte r‖s (RFC 7518 §3.4), never DER.
            guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: input)
        case ("EdDSA", .ed25519(let key)):
            return key.isValidSignature(signature, for: input)
        case ("RS256", .rsa(let key)), ("PS256", .rsa(let key)):
            guard case .rsa(let n, _) = self.key, signature.count == n.count else { return false }
            let padding: _RSA.Signing.Padding = alg == "PS256" ? .PSS : .insecurePKCS1v1_5
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: padding)
        default:
            return false
        }
    }
}
