/// Why a request to the OpenID provider, or a client's registration, was refused: an OAuth 2.0 error code (RFC 6749
/// §3.3 and §5.2; `invalid_redirect_uri` from RFC 7591 §3.2.2) and a reason for people. Codes are added with the
/// rules that raise them.
///
/// Compared by code, so tests compare codes (`#expect(throws: OpenIDError.invalidScope(""))`).
public struct OpenIDError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case invalidScope = "invalid_scope"
        case invalidRedirectURI = "invalid_redirect_uri"
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

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.kind) }
}
