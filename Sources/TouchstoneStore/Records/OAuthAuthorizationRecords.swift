public import Foundation

/// An authorization code of the OpenID provider, stored by its hash: what the code stands for when a client
/// exchanges it.
public struct AuthorizationCodeRecord: Sendable, Hashable {
    /// SHA-256 (hex) of the code; the code itself is never stored.
    public var codeHash: String
    public var clientId: String
    public var userId: String
    /// The `sid` of the Touchstone session the user signed in with.
    public var sessionId: String
    /// The `redirect_uri` of the authorization request, as sent; the exchange must send the same.
    public var redirectURI: String
    /// The PKCE `code_challenge` (S256).
    public var codeChallenge: String
    public var nonce: String?
    /// The granted scopes, space-separated.
    public var scope: String
    public var authTime: Date
    /// `amr` values of the sign-in.
    public var amr: [String]
    public var acr: String?
    /// The token family the exchange starts (and a replay of the code revokes).
    public var familyId: String
    public var createdAt: Date
    public var expiresAt: Date
    public var usedAt: Date?
    /// The authorization request's `dpop_jkt` (RFC 9449 §10): the exchange needs a proof from this key.
    public var dpopThumbprint: String?

    public init(
        codeHash: String,
        clientId: String,
        userId: String,
        sessionId: String,
        redirectURI: String,
        codeChallenge: String,
        nonce: String?,
        scope: String,
        authTime: Date,
        amr: [String],
        acr: String?,
        familyId: String,
        createdAt: Date,
        expiresAt: Date,
        usedAt: Date? = nil
    ) {
        self.codeHash = codeHash
        self.clientId = clientId
        self.userId = userId
        self.sessionId = sessionId
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.nonce = nonce
        self.scope = scope
        self.authTime = authTime
        self.amr = amr
        self.acr = acr
        self.familyId = familyId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// What one authorization gave a client: its access and refresh tokens live while the family is not revoked and
/// its Touchstone session has not ended.
public struct TokenFamilyRecord: Sendable, Hashable {
    public var id: String
    public var clientId: String
    public var userId: String
    public var sessionId: String
    /// The scopes of the authorization, space-separated (a refresh may narrow them, never widen them).
    public var scope: String
    public var authTime: Date
    public var amr: [String]
    public var acr: String?
    public var createdAt: Date
    public var revokedAt: Date?
    /// When its session ended (sign-out, revocation); tokens die with it.
    public var sessionEndedAt: Date?
    /// The thumbprint of the DPoP key a public client's refresh tokens are bound to (RFC 9449 §5): a refresh needs a
    /// proof from this key. Nil: not bound (a confidential client, or no proof at the first exchange).
    public var dpopThumbprint: String?

    public init(
        id: String,
        clientId: String,
        userId: String,
        sessionId: String,
        scope: String,
        authTime: Date,
        amr: [String],
        acr: String?,
        createdAt: Date,
        revokedAt: Date? = nil,
        sessionEndedAt: Date? = nil
    ) {
        self.id = id
        self.clientId = clientId
        self.userId = userId
        self.sessionId = sessionId
        self.scope = scope
        self.authTime = authTime
        self.amr = amr
        self.acr = acr
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.sessionEndedAt = sessionEndedAt
    }

    /// Whether the family's tokens still work: neither revoked nor outlived by their session.
    public var isLive: Bool { self.revokedAt == nil && self.sessionEndedAt == nil }
}

/// A refresh token, by its hash. Used once: a refresh returns a new one and marks this one used.
public struct RefreshTokenRecord: Sendable, Hashable {
    public var tokenHash: String
    public var familyId: String
    public var scope: String
    public var createdAt: Date
    public var usedAt: Date?

    public init(tokenHash: String, familyId: String, scope: String, createdAt: Date, usedAt: Date? = nil) {
        self.tokenHash = tokenHash
        self.familyId = familyId
        self.scope = scope
        self.createdAt = createdAt
        self.usedAt = usedAt
    }
}

/// What became of a presented refresh token.
public enum RefreshTokenUse: Sendable, Hashable {
    /// It was unused and is used now.
    case fresh(RefreshTokenRecord)
    /// It had been used before: a reuse (RFC 9700 §4.14.2).
    case reused(RefreshTokenRecord)
    /// No such token.
    case unknown
}

/// What became of a presented authorization code.
public enum AuthorizationCodeRedemption: Sendable, Hashable {
    /// It was unused and is used now.
    case redeemed(AuthorizationCodeRecord)
    /// It had been used before: a replay (RFC 6749 §4.1.2).
    case replayed(AuthorizationCodeRecord)
    /// No such code (never issued, or purged after expiry).
    case unknown
}

/// A user's consent to a third-party client: the scopes allowed.
public struct OAuthConsentRecord: Sendable, Hashable {
    public var userId: String
    public var clientId: String
    public var scopes: [String]
    public var grantedAt: Date

    public init(userId: String, clientId: String, scopes: [String], grantedAt: Date) {
        self.userId = userId
        self.clientId = clientId
        self.scopes = scopes
        self.grantedAt = grantedAt
    }
}

/// A back-channel logout owed to a client for a session that ended.
public struct LogoutNoticeRecord: Sendable, Hashable {
    public var clientId: String
    public var sessionId: String
    public var userId: String
    public var backchannelLogoutURI: String
    /// Failed deliveries so far.
    public var attempts: Int

    public init(clientId: String, sessionId: String, userId: String, backchannelLogoutURI: String, attempts: Int) {
        self.clientId = clientId
        self.sessionId = sessionId
        self.userId = userId
        self.backchannelLogoutURI = backchannelLogoutURI
        self.attempts = attempts
    }
}
