/// Why a request to the OpenID provider, or a client's registration, was refused: an OAuth 2.0 error code (RFC 6749
/// §4.1.2.1 and §5.2; `invalid_redirect_uri` from RFC 7591 §3.2.2) and a reason for people.
///
/// Compared by code, so tests compare codes (`#expect(throws: OpenIDError.invalidScope(""))`).
public struct OpenIDError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidScope = "invalid_scope"
        case invalidRedirectURI = "invalid_redirect_uri"
        case invalidGrant = "invalid_grant"
    }

    private let kind: Code
    /// What was wrong, for the `error_description` (never a secret).
    public let reason: String

    private init(_ kind: Code, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The OAuth error code (`invalid_request`, `invalid_scope`, `invalid_redirect_uri`, `invalid_grant`).
    public var code: String { self.kind.rawValue }
    public var description: String { "\(self.code): \(self.reason)" }

    /// A missing, repeated or malformed parameter.
    public static func invalidRequest(_ reason: String) -> Self { Self(.invalidRequest, reason) }
    /// A scope that is malformed or that the provider does not know.
    public static func invalidScope(_ reason: String) -> Self { Self(.invalidScope, reason) }
    /// A redirect URI a client may not register.
    public static func invalidRedirectURI(_ reason: String) -> Self { Self(.invalidRedirectURI, reason) }
    /// A grant (code, refresh token, PKCE verifier) that does not hold.
    public static func invalidGrant(_ reason: String) -> Self { Self(.invalidGrant, reason) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.kind) }
}
