/// Why a request to the OpenID provider, or a client's registration, was refused: an OAuth 2.0 error code (RFC 6749
/// §3.3 and §5.2; `invalid_redirect_uri` from RFC 7591 §3.2.2) and a reason for people. Codes are added with the
/// rules that raise them.
///
/// Compared by code, so tests compare codes (`#expect(throws: OpenIDError.invalidScope(""))`).
public struct OpenIDError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case invalidScope = "invalid_scope"
        case invalidRedirectURI = "invalid_redirect_uri"
        case invalidRequest = "invalid_request"
        case unsupportedResponseType = "unsupported_response_type"
        case loginRequired = "login_required"
        case consentRequired = "consent_required"
        case accessDenied = "access_denied"
        case requestNotSupported = "request_not_supported"
        case requestURINotSupported = "request_uri_not_supported"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unsupportedGrantType = "unsupported_grant_type"
        case unsupportedTokenType = "unsupported_token_type"
        case temporarilyUnavailable = "temporarily_unavailable"
        case authorizationPending = "authorization_pending"
        case slowDown = "slow_down"
        case expiredToken = "expired_token"
        case unknownUserId = "unknown_user_id"
        case invalidBindingMessage = "invalid_binding_message"
        case unauthorizedClient = "unauthorized_client"
        case invalidDPoPProof = "invalid_dpop_proof"
        case useDPoPNonce = "use_dpop_nonce"
    }

    private let kind: Code
    /// What was wrong, for the `error_description` (never a secret).
    public let reason: String

    private init(_ kind: Code, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The OAuth error code (`invalid_scope`, `invalid_redirect_uri`).
    public var code: String { self.kind.rawValue }
    public var description: String { "\(self.code): \(self.reason)" }

    /// A scope that is malformed or that the provider does not know.
    public static func invalidScope(_ reason: String) -> Self { Self(.invalidScope, reason) }
    /// A redirect URI a client may not register.
    public static func invalidRedirectURI(_ reason: String) -> Self { Self(.invalidRedirectURI, reason) }
    /// A missing, repeated, malformed or oversized parameter (RFC 6749 §4.1.2.1, §5.2).
    public static func invalidRequest(_ reason: String) -> Self { Self(.invalidRequest, reason) }
    public static func unsupportedResponseType(_ reason: String) -> Self { Self(.unsupportedResponseType, reason) }
    /// `prompt=none` without a signed-in browser (OpenID Connect Core §3.1.2.6).
    public static func loginRequired(_ reason: String) -> Self { Self(.loginRequired, reason) }
    /// `prompt=none` when the user has not consented yet.
    public static func consentRequired(_ reason: String) -> Self { Self(.consentRequired, reason) }
    /// The user (or a policy, such as an ACR the account cannot meet) refused.
    public static func accessDenied(_ reason: String) -> Self { Self(.accessDenied, reason) }
    public static func requestNotSupported(_ reason: String) -> Self { Self(.requestNotSupported, reason) }
    public static func requestURINotSupported(_ reason: String) -> Self { Self(.requestURINotSupported, reason) }
    /// Client authentication failed (RFC 6749 §5.2): 401.
    public static func invalidClient(_ reason: String) -> Self { Self(.invalidClient, reason) }
    /// The code or refresh token is invalid, expired, used, revoked or another client's.
    public static func invalidGrant(_ reason: String) -> Self { Self(.invalidGrant, reason) }
    public static func unsupportedGrantType(_ reason: String) -> Self { Self(.unsupportedGrantType, reason) }
    /// RFC 7009 §2.2.1.
    public static func unsupportedTokenType(_ reason: String) -> Self { Self(.unsupportedTokenType, reason) }
    /// The provider cannot answer now (its database is unavailable): 503.
    public static func temporarilyUnavailable(_ reason: String) -> Self { Self(.temporarilyUnavailable, reason) }

    /// CIBA (Core 1.0 §11): the user has not decided yet; poll again after the interval.
    public static func authorizationPending(_ reason: String) -> Self { Self(.authorizationPending, reason) }
    /// CIBA: the client polls faster than the interval.
    public static func slowDown(_ reason: String) -> Self { Self(.slowDown, reason) }
    /// CIBA: the request expired before the user decided.
    public static func expiredToken(_ reason: String) -> Self { Self(.expiredToken, reason) }
    /// CIBA (§13): the hint names no user the provider knows.
    public static func unknownUserId(_ reason: String) -> Self { Self(.unknownUserId, reason) }
    /// CIBA (§13): the binding message is too long or has characters it may not.
    public static func invalidBindingMessage(_ reason: String) -> Self { Self(.invalidBindingMessage, reason) }
    /// The client may not use this flow (RFC 6749 §5.2; CIBA §13: a client not registered for CIBA).
    public static func unauthorizedClient(_ reason: String) -> Self { Self(.unauthorizedClient, reason) }
    /// RFC 9449 §5: the DPoP proof is missing where required, malformed, or not for this request.
    public static func invalidDPoPProof(_ reason: String) -> Self { Self(.invalidDPoPProof, reason) }
    /// RFC 9449 §8: the proof lacks the server's current nonce (sent in `DPoP-Nonce`).
    public static func useDPoPNonce(_ reason: String) -> Self { Self(.useDPoPNonce, reason) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.kind) }
}
