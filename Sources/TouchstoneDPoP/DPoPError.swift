/// Why a DPoP proof (RFC 9449) is refused. Every case answers `invalid_dpop_proof` except ``nonceRequired``, which is
/// `use_dpop_nonce` (the client retries with the `DPoP-Nonce` the server sends); ``reason`` says which check failed
/// and never repeats a secret (no token, no signature, no key).
public struct DPoPError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        case malformed, tooLarge = "too_large", wrongType = "wrong_type", unsupportedAlgorithm = "unsupported_algorithm"
        case invalidKey = "invalid_key", privateKey = "private_key", invalidSignature = "invalid_signature"
        case methodMismatch = "htm_mismatch", urlMismatch = "htu_mismatch", stale, future
        case missingAccessTokenHash = "ath_missing", accessTokenHashMismatch = "ath_mismatch", unexpectedAccessTokenHash = "ath_unexpected"
        case nonceRequired = "nonce_required", nonceMismatch = "nonce_mismatch", replayed
        /// No proof where one is required (a client registered for DPoP, a bound code, token or session).
        case missing
        /// A proof from another key than the one the code, token or session is bound to.
        case keyMismatch = "key_mismatch"
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The OAuth error code (RFC 9449 §12.2): `use_dpop_nonce` for a missing or unknown nonce where one is demanded,
    /// `invalid_dpop_proof` otherwise.
    public var oauthError: String {
        self.code == .nonceRequired || self.code == .nonceMismatch ? "use_dpop_nonce" : "invalid_dpop_proof"
    }

    public var description: String { "\(self.code.rawValue): \(self.reason)" }
}
