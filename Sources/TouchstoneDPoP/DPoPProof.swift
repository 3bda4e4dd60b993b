public import Foundation
import Crypto
import TouchstoneCrypto
import Synchronization

/// A DPoP proof that passed every check of RFC 9449 §4.3 that needs no state: what the caller still has to do with
/// it is refuse a `jti` seen before (``DPoPReplayCache``) and bind or compare the key's ``thumbprint``.
public struct VerifiedDPoPProof: Sendable, Hashable {
    /// The JWK SHA-256 thumbprint of the proof's key (RFC 7638): `cnf.jkt`.
    public var thumbprint: String
    public var jti: String
    public var issuedAt: Date
    public var nonce: String?
}

/// Checks DPoP proofs (RFC 9449 §4.3): one compact JWS, `typ` `dpop+jwt`, an asymmetric allowed `alg`, a public `jwk`
/// whose signature verifies, `htm` and `htu` of this request, `iat` recent (and not ahead of this clock by more than
/// the allowance), `jti` present, `ath` the access token's hash when a token comes with the proof, and the server's
/// nonce when it demands one.
public struct DPoPVerifier: Sendable {
    /// How old a proof may be, and how far ahead of this clock its `iat` may be (clock skew).
    public var maximumAge: TimeInterval
    public var allowedSkew: TimeInterval
    /// The largest proof accepted, in bytes.
    public var maximumLength = 8192
    /// The JWS algorithms accepted (never `none` or an HMAC).
    public var algorithms: Set<String> = DPoPVerifier.supportedAlgorithms
    /// Runs each signature check, for a caller that measures them (the server times a sample for its metrics); nil:
    /// the check runs directly. It must return what the check it is given returns.
    public var signatureCheck: (@Sendable (_ check: () -> Bool) -> Bool)?
    /// Headers already read, by their encoded text: a client's proofs all share one header (its `typ`, `alg` and
    /// `jwk`), so its key is parsed once, not at every request.
    let headers = DPoPHeaderCache(capacity: 10_000)

    public static let supportedAlgorithms: Set<String> = ["ES256", "EdDSA", "PS256", "RS256"]

    public init(maximumAge: TimeInterval = 60, allowedSkew: TimeInterval = 5) {
        self.maximumAge = maximumAge
        self.allowedSkew = allowedSkew
    }

    /// - Parameters:
    ///   - proof: The `DPoP` header's value.
    ///   - method: The request's method (`htm` must equal it).
    ///   - url: The request's URL as the server's public origin names it; query and fragment are ignored, and both
    ///     sides are normalised (``DPoPURL/normalize(_:)``).
    ///   - accessToken: The access token sent with the proof, if any: `ath` must then be its SHA-256, base64url.
    ///   - nonce: When the server demands a nonce: whether the proof's `nonce` is one it issued.
    public func verify(
        _ proof: String,
        method: String,
        url: String,
        accessToken: String?,
        nonce acceptNonce: ((String) -> Bool)? = nil,
        at now: Date
    ) throws(DPoPError) -> VerifiedDPoPProof {
        // Read as bytes: the proof is ASCII when well formed, and splitting or searching it as a String walks
        // grapheme clusters.
        let bytes = Array(proof.utf8)
        guard bytes.count <= self.maximumLength else { throw DPoPError(.tooLarge, "the proof is longer than \(self.maximumLength) bytes") }
        let dot = UInt8(ascii: ".")
        guard let first = bytes.firstIndex(of: dot), let second = bytes[(first + 1)...].firstIndex(of: dot),
            !bytes[(second + 1)...].contains(dot),
            let payloadBytes = Base64.urlDecodeCanonical(bytes[(first + 1)..<second]),
            let signature = Base64.urlDecodeCanonical(bytes[(second + 1)...])
        else {
            throw DPoPError(.malformed, "the proof is not one compact JWS (three base64url parts)")
        }
        let (alg, key) = try self.header(bytes[..<first])
        guard let claims = DPoPClaims.parse(payloadBytes) else { throw DPoPError(.malformed, "the payload is not a JSON object") }
        let signed = Array(bytes[..<second])
        let valid = self.signatureCheck.map { $0 { key.verifies(signature, over: signed, alg: alg) } }
            ?? key.verifies(signature, over: signed, alg: alg)
        guard valid else {
            throw DPoPError(.invalidSignature, "the proof's signature does not verify with its jwk")
        }
        // No control characters (C0, DEL, C1: the API's rule for every string): a NUL cannot be stored in PostgreSQL's
        // text (the replay record), and none belongs in an identifier. A printable ASCII jti, the usual one, is not
        // looked at twice.
        guard let jti = claims.jti, !jti.isEmpty, jti.utf8.count <= 256,
            jti.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
                || !jti.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw DPoPError(.malformed, "the proof needs a jti of 1 to 256 bytes without control characters")
        }
        guard claims.htm == method else { throw DPoPError(.methodMismatch, "htm is not this request's method") }
        // htu names the URI without query and fragment (§4.2): one that carries either is refused, and the request's
        // own query is ignored. The same text needs no normalisation (a client's usual case).
        guard let htu = claims.htu, !htu.utf8.contains(UInt8(ascii: "?")), !htu.utf8.contains(UInt8(ascii: "#")),
            htu == url || DPoPURL.normalize(htu).map({ $0 == DPoPURL.normalize(url) }) == true
        else {
            throw DPoPError(.urlMismatch, "htu is not this request's URL (without query and fragment)")
        }
        guard let iatSeconds = claims.iat else { throw DPoPError(.malformed, "the proof has no numeric iat") }
        let iat = Date(timeIntervalSince1970: iatSeconds)
        guard iat.timeIntervalSince(now) <= self.allowedSkew else { throw DPoPError(.future, "iat is ahead of the server's clock") }
        guard now.timeIntervalSince(iat) <= self.maximumAge else { throw DPoPError(.stale, "the proof is older than \(Int(self.maximumAge)) seconds") }
        if let accessToken {
            guard let ath = claims.ath else { throw DPoPError(.missingAccessTokenHash, "a proof sent with an access token needs ath") }
            let expected = Array(SHA256.hash(data: Array(accessToken.utf8)))
            guard let sent = Base64.urlDecodeCanonical(Array(ath.utf8)), ConstantTime.equal(sent, expected) else {
                throw DPoPError(.accessTokenHashMismatch, "ath is not the hash of the access token sent")
            }
        } else if claims.ath != nil {
            throw DPoPError(.unexpectedAccessTokenHash, "ath without an access token")
        }
        if let acceptNonce {
            guard let nonce = claims.nonce else { throw DPoPError(.nonceRequired, "the server demands a nonce") }
            guard acceptNonce(nonce) else { throw DPoPError(.nonceMismatch, "the nonce is not a current one of this server") }
        }
        return VerifiedDPoPProof(thumbprint: key.thumbprint, jti: jti, issuedAt: iat, nonce: claims.nonce)
    }

    /// The header's `alg` and key, checked (`typ`, an accepted `alg`, a public `jwk`); from the cache when this header
    /// text was read before (then it is not decoded again).
    private func header(_ text: ArraySlice<UInt8>) throws(DPoPError) -> (String, DPoPPublicKey) {
        let key = String(decoding: text, as: UTF8.self)
        if let known = self.headers.value(for: key) {
            guard self.algorithms.contains(known.0) else { throw DPoPError(.unsupportedAlgorithm, "alg \(known.0.prefix(16)) is not accepted") }
            return known
        }
        guard let bytes = Base64.urlDecodeCanonical(text) else {
            throw DPoPError(.malformed, "the proof is not one compact JWS (three base64url parts)")
        }
        let header = try Self.object(bytes, "header")
        guard header["typ"] as? String == "dpop+jwt" else { throw DPoPError(.wrongType, "typ must be dpop+jwt") }
        guard let alg = header["alg"] as? String else { throw DPoPError(.malformed, "the header has no alg") }
        guard self.algorithms.contains(alg) else { throw DPoPError(.unsupportedAlgorithm, "alg \(alg.prefix(16)) is not accepted") }
        guard let jwk = header["jwk"] as? [String: Any] else { throw DPoPError(.invalidKey, "the header has no jwk") }
        let parsed = try DPoPPublicKey(jwk: jwk)
        self.headers.set((alg, parsed), for: key)
        return (alg, parsed)
    }

    /// A JSON object read by Foundation: the header, once per key (then cached; its `jwk` is a nested object).
    private static func object(_ bytes: [UInt8], _ what: String) throws(DPoPError) -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw DPoPError(.malformed, "the \(what) is not a JSON object")
        }
        return object
    }
}

/// RFC 9449 §4.3 step 9: `htu` and the request's URL compared without query and fragment, after RFC 3986's
/// syntax-based normalisation (scheme and host lower case, the default port dropped, an empty path as `/`).
public enum DPoPURL {
    public static func normalize(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil
        else {
            return nil
        }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = components.port.flatMap { $0 == defaultPort ? nil : $0 }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")\(path)"
    }
}

/// Headers of accepted shape (an `alg` and a public key) by their base64url text: bounded, emptied when full (a flood
/// of new keys costs a parse each, as without the cache). Only headers that passed every header check are kept.
final class DPoPHeaderCache: Sendable {
    private let entries = Mutex<[String: (String, DPoPPublicKey)]>([:])
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    func value(for text: String) -> (String, DPoPPublicKey)? {
        self.entries.withLock { $0[text] }
    }

    func set(_ value: (String, DPoPPublicKey), for text: String) {
        guard text.utf8.count <= 4096 else { return }
        self.entries.withLock { entries in
            if entries.count >= self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = value
        }
    }
}
