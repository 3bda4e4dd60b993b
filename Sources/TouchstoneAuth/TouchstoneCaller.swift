public import Foundation

/// Who called an API, from a verified access token.
public struct TouchstoneCaller: Sendable, Hashable {
    /// The verified claims.
    public let claims: AccessTokenClaims
    /// The JWK thumbprint of the DPoP key the caller proved it holds (RFC 9449): the token is bound to it, and the
    /// request carried a valid proof from it. Nil for a bearer token. An API can tie its own records (a device, a
    /// payment mandate) to this key.
    public let dpopThumbprint: String?

    public init(claims: AccessTokenClaims, dpopThumbprint: String? = nil) {
        self.claims = claims
        self.dpopThumbprint = dpopThumbprint
    }

    /// `sub`: the Touchstone user id.
    public var userId: String { self.claims.subject }
    /// `sid`: the session the token came from (stable across its tokens; never a secret).
    public var sessionId: String { self.claims.sessionId }
    /// `amr`: how the session was authenticated (`pwd`, `pin`, `hwk`, `user`, ...).
    public var methods: [String] { self.claims.methods }
    /// `auth_time`: when the session was authenticated.
    public var authenticatedAt: Date { Date(timeIntervalSince1970: TimeInterval(self.claims.authenticatedAt)) }
    /// `client_id`: the app the token was issued to.
    public var clientId: String { self.claims.clientId }
    /// `exp`.
    public var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(self.claims.expiresAt)) }

    /// Whether the session was authenticated at most `seconds` before `now` (for step-up checks before sensitive
    /// operations).
    public func authenticated(within seconds: TimeInterval, now: Date = Date()) -> Bool {
        now.timeIntervalSince(self.authenticatedAt) <= seconds
    }

    /// Whether the session was opened with a device-bound key: a biometric device key or a passkey (`amr` has `hwk`).
    public var signedInWithDeviceKeyOrPasskey: Bool { self.methods.contains("hwk") }

    /// Whether the session was opened with the account password (`amr` has `pwd`).
    public var signedInWithPassword: Bool { self.methods.contains("pwd") }
}
