public import JWTKit

/// The claims of a Touchstone access token (RFC 9068, the JWT profile for OAuth 2.0 access tokens).
///
/// Times are whole seconds since 1970 (`NumericDate`). `aud` is decoded from a string or an array and always encoded
/// as an array.
public struct AccessTokenClaims: JWTPayload, Hashable {
    /// `iss`: the issuer's URL.
    public var issuer: String
    /// `sub`: the user id.
    public var subject: String
    /// `aud`: who the token is for.
    public var audience: [String]
    /// `exp`.
    public var expiresAt: Int64
    /// `iat`.
    public var issuedAt: Int64
    /// `nbf`, if present (Touchstone does not set it).
    public var notBefore: Int64?
    /// `jti`: unique per token.
    public var tokenId: String
    /// `client_id`: the app the token was issued to.
    public var clientId: String
    /// `sid`: a stable, non-secret identifier of the session the token was issued from.
    public var sessionId: String
    /// `auth_time`: when the session was authenticated.
    public var authenticatedAt: Int64
    /// `amr`: how (RFC 8176 values: `pwd`, `pin`, `hwk`, `user`, `mfa`).
    public var methods: [String]
    /// `scope`: the space-separated scopes an OpenID client was granted (nil for Touchstone's own session tokens).
    public var scope: String?
    /// `acr`: the authentication context class of the sign-in (`phr`, `phrh`), when it met one.
    public var authenticationContext: String?
    /// `grant_id`: the authorization (token family) an OpenID client's token belongs to; revoking it ends the token.
    public var grantId: String?
    /// `cnf.jkt` (RFC 9449 §6.1): the SHA-256 JWK thumbprint of the DPoP key the token is bound to. A bound token is
    /// accepted only with a DPoP proof from that key (``DPoPRequirement``), never as a bearer token.
    public var confirmationThumbprint: String?

    public init(
        issuer: String,
        subject: String,
        audience: [String],
        expiresAt: Int64,
        issuedAt: Int64,
        notBefore: Int64? = nil,
        tokenId: String,
        clientId: String,
        sessionId: String,
        authenticatedAt: Int64,
        methods: [String],
        scope: String? = nil,
        authenticationContext: String? = nil,
        grantId: String? = nil,
        confirmationThumbprint: String? = nil
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.tokenId = tokenId
        self.clientId = clientId
        self.sessionId = sessionId
        self.authenticatedAt = authenticatedAt
        self.methods = methods
        self.scope = scope
        self.authenticationContext = authenticationContext
        self.grantId = grantId
        self.confirmationThumbprint = confirmationThumbprint
    }

    enum CodingKeys: String, CodingKey {
        case issuer = "iss"
        case subject = "sub"
        case audience = "aud"
        case expiresAt = "exp"
        case issuedAt = "iat"
        case notBefore = "nbf"
        case tokenId = "jti"
        case clientId = "client_id"
        case sessionId = "sid"
        case authenticatedAt = "auth_time"
        case methods = "amr"
        case scope
        case authenticationContext = "acr"
        case grantId = "grant_id"
        case confirmation = "cnf"
    }

    /// The `cnf` object (RFC 7800 §3.1); only its `jkt` member is read.
    struct Confirmation: Codable, Hashable {
        var jkt: String?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.issuer = try container.decode(String.self, forKey: .issuer)
        self.subject = try container.decode(String.self, forKey: .subject)
        self.audience = try container.decodeAudience(forKey: .audience)
        self.expiresAt = try container.decode(Int64.self, forKey: .expiresAt)
        self.issuedAt = try container.decode(Int64.self, forKey: .issuedAt)
        self.notBefore = try container.decodeIfPresent(Int64.self, forKey: .notBefore)
        self.tokenId = try container.decode(String.self, forKey: .tokenId)
        self.clientId = try container.decode(String.self, forKey: .clientId)
        self.sessionId = try container.decode(String.self, forKey: .sessionId)
        self.authenticatedAt = try container.decode(Int64.self, forKey: .authenticatedAt)
        self.methods = try container.decode([String].self, forKey: .methods)
        self.scope = try container.decodeIfPresent(String.self, forKey: .scope)
        self.authenticationContext = try container.decodeIfPresent(String.self, forKey: .authenticationContext)
        self.grantId = try container.decodeIfPresent(String.self, forKey: .grantId)
        self.confirmationThumbprint = try container.decodeIfPresent(Confirmation.self, forKey: .confirmation)?.jkt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.issuer, forKey: .issuer)
        try container.encode(self.subject, forKey: .subject)
        try container.encode(self.audience, forKey: .audience)
        try container.encode(self.expiresAt, forKey: .expiresAt)
        try container.encode(self.issuedAt, forKey: .issuedAt)
        try container.encodeIfPresent(self.notBefore, forKey: .notBefore)
        try container.encode(self.tokenId, forKey: .tokenId)
        try container.encode(self.clientId, forKey: .clientId)
        try container.encode(self.sessionId, forKey: .sessionId)
        try container.encode(self.authenticatedAt, forKey: .authenticatedAt)
        try container.encode(self.methods, forKey: .methods)
        try container.encodeIfPresent(self.scope, forKey: .scope)
        try container.encodeIfPresent(self.authenticationContext, forKey: .authenticationContext)
        try container.encodeIfPresent(self.grantId, forKey: .grantId)
        try container.encodeIfPresent(self.confirmationThumbprint.map { Confirmation(jkt: $0) }, forKey: .confirmation)
    }

    /// Claims are checked by ``AccessTokenVerifier`` with its clock and leeway, not by jwt-kit.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The `typ` header of access tokens (RFC 9068 §2.1).
public let accessTokenType = "at+jwt"

extension KeyedDecodingContainer {
    /// `aud`: one string or an array of them (RFC 7519 §4.1.3), always read as an array.
    func decodeAudience(forKey key: Key) throws -> [String] {
        if let single = try? self.decode(String.self, forKey: key) { return [single] }
        return try self.decode([String].self, forKey: key)
    }
}
