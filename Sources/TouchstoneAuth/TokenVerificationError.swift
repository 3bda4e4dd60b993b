/// Why a token was refused. Compare ``code``s; ``reason`` is for logs and people.
public struct TokenVerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of refusal, each with a stable string value.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        private init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// Not three base64url parts, too long, or a header or payload that is not the expected JSON.
        public static let malformed = Code("malformed")
        /// `alg` is `none`, an HMAC algorithm or anything but the key set's asymmetric algorithms.
        public static let unsupportedAlgorithm = Code("unsupported_algorithm")
        /// `typ` is not the expected type (`at+jwt` for access tokens).
        public static let wrongType = Code("wrong_type")
        /// No key of the issuer has this `kid` (after a refresh, if one was allowed).
        public static let unknownKey = Code("unknown_key")
        /// The header's `alg` is not the algorithm of the key its `kid` names.
        public static let algorithmMismatch = Code("algorithm_mismatch")
        /// The signature does not verify with the key.
        public static let invalidSignature = Code("invalid_signature")
        /// `iss` is not the expected issuer.
        public static let wrongIssuer = Code("wrong_issuer")
        /// `aud` names none of the expected audiences.
        public static let wrongAudience = Code("wrong_audience")
        /// `exp` has passed (beyond the leeway).
        public static let expired = Code("expired")
        /// `nbf` or `iat` is in the future (beyond the leeway).
        public static let notYetValid = Code("not_yet_valid")
        /// The issuer's key set could not be fetched and no cached copy holds the key.
        public static let keySetUnavailable = Code("key_set_unavailable")

        public var description: String { self.rawValue }
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(self.code): \(self.reason)" }
}
