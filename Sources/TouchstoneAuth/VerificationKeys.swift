public import Foundation
public import JWTKit

/// A public key of the issuer, as its JWKS publishes it: a `kid`, an algorithm, and a jwt-kit key collection holding
/// only that key (so a token can be checked against that key and no other).
public struct VerificationKey: Sendable {
    /// The algorithms Touchstone signs with. Nothing else (no `none`, no HMAC, no RSA) is ever accepted.
    public static let supportedAlgorithms: Set<String> = ["ES256", "EdDSA"]

    public let kid: String
    /// `ES256` or `EdDSA`: the only algorithm tokens signed with this key may name.
    public let algorithm: String
    let collection: JWTKeyCollection

    /// A key from one JWK of a JWKS: `EC`/`P-256` for `ES256`, `OKP`/`Ed25519` for `EdDSA`. A JWK without `alg` takes the
    /// algorithm of its curve; one whose `alg` does not fit its curve, whose `use` is not `sig`, or without `kid`, is
    /// refused.
    public init(jwk: PublicJWK) async throws(TokenVerificationError) {
        guard let kid = jwk.kid, !kid.isEmpty else { throw TokenVerificationError(.malformed, "a JWK without kid") }
        if let use = jwk.use, use != "sig" { throw TokenVerificationError(.malformed, "JWK \(kid) is not for signatures (use \(use))") }
        let collection = JWTKeyCollection()
        let identifier = JWKIdentifier(string: kid)
        switch (jwk.kty, jwk.crv) {
        case ("EC", "P-256"):
            guard jwk.alg == nil || jwk.alg == "ES256", let x = jwk.x, let y = jwk.y,
                let key = try? ES256PublicKey(parameters: (x: x, y: y))
            else {
                throw TokenVerificationError(.malformed, "JWK \(kid) is not a usable ES256 key")
            }
            await collection.add(ecdsa: key, kid: identifier)
            self.algorithm = "ES256"
        case ("OKP", "Ed25519"):
            guard jwk.alg == nil || jwk.alg == "EdDSA", let x = jwk.x, let key = try? EdDSA.PublicKey(x: x, curve: .ed25519) else {
                throw TokenVerificationError(.malformed, "JWK \(kid) is not a usable EdDSA key")
            }
            await collection.add(eddsa: key, kid: identifier)
            self.algorithm = "EdDSA"
        default:
            throw TokenVerificationError(.unsupportedAlgorithm, "JWK \(kid) has key type \(jwk.kty)/\(jwk.crv ?? "-"), not ES256 or EdDSA")
        }
        self.kid = kid
        self.collection = collection
    }

    /// The usable keys of a JWKS document (`{"keys": [...]}`); keys this library cannot use are skipped.
    public static func keys(fromJWKS data: Data) async throws(TokenVerificationError) -> [VerificationKey] {
        guard let set = try? JSONDecoder().decode(PublicJWKSet.self, from: data) else {
            throw TokenVerificationError(.malformed, "the key set is not a JWKS document")
        }
        var keys: [VerificationKey] = []
        for jwk in set.keys {
            if let key = try? await VerificationKey(jwk: jwk) { keys.append(key) }
        }
        return keys
    }
}

/// One public JWK (RFC 7517 / RFC 8037) as Touchstone publishes it.
public struct PublicJWK: Codable, Sendable, Hashable {
    public var kty: String
    public var crv: String?
    public var x: String?
    public var y: String?
    public var kid: String?
    public var alg: String?
    public var use: String?

    public init(kty: String, crv: String?, x: String?, y: String? = nil, kid: String?, alg: String?, use: String? = "sig") {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.kid = kid
        self.alg = alg
        self.use = use
    }
}

/// A JWKS document: `{"keys": [...]}`.
public struct PublicJWKSet: Codable, Sendable, Hashable {
    public var keys: [PublicJWK]

    public init(keys: [PublicJWK]) {
        self.keys = keys
    }
}

/// Where a verifier finds the key a token's `kid` names.
public protocol VerificationKeyProvider: Sendable {
    /// The key with this `kid`, or `nil` when the issuer has none (a provider may refresh its copy first).
    func key(for kid: String) async throws(TokenVerificationError) -> VerificationKey?
}

/// A fixed set of keys (tests, and the issuer itself, which knows its keys).
public struct StaticKeySet: VerificationKeyProvider {
    let keys: [String: VerificationKey]

    public init(_ keys: [VerificationKey]) {
        self.keys = Dictionary(keys.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public func key(for kid: String) async throws(TokenVerificationError) -> VerificationKey? { self.keys[kid] }
}
