import Crypto
import Foundation
import JWTKit
import TouchstoneAuth
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore

/// What the provider's endpoints share: the issuer, the store, the signing keys, and the minting of access and ID
/// tokens for a token family.
struct OpenIDProvider: Sendable {
    let issuer: String
    let store: any TouchstoneStore
    let ring: SigningKeyRing
    let secrets: Secrets
    let now: @Sendable () -> Date
    let audit: AuditLog
    /// `aud` of access tokens besides the client itself (`TOUCHSTONE_TOKEN_AUDIENCE`, or the issuer).
    let audiences: [String]
    let accessTokenLifetime: TimeInterval
    let metrics: ServerMetrics?

    /// How long a code can be exchanged (OAuth 2.1 recommends a short life; RFC 6749 §4.1.2 a maximum of 10 minutes).
    static let codeLifetime: TimeInterval = 60
    /// How long after a phone approval its session may become a browser's on the sign-in page.
    static let phoneSessionWindow: TimeInterval = 120

    // MARK: Sessions

    /// The live session with this `sid`, and its user; nil when it ended (revoked, expired, idle) or its user is gone.
    func liveSession(id: String) async throws -> (SessionRecord, UserRecord)? {
        guard let session = try await self.store.session(id: id) else { return nil }
        let now = self.now()
        guard session.revokedAt == nil, now < session.expiresAt, now < session.idleExpiresAt else { return nil }
        guard let user = try await self.store.user(id: session.userId) else { return nil }
        return (session, user)
    }

    /// The session's `sid`, given to it now if it has none yet.
    func sessionId(of session: SessionRecord) async throws -> String {
        if let id = session.id { return id }
        guard let id = try await self.store.assignSessionId(tokenHash: session.tokenHash, id: self.secrets.newIdentifier()) else {
            throw APIError.unauthenticated("unknown session token")
        }
        return id
    }

    // MARK: Client authentication

    /// The client a token, revocation or introspection request authenticates as (RFC 6749 §2.3.1): HTTP Basic
    /// (`client_secret_basic`, the id and secret form-encoded), `client_id` and `client_secret` in the body
    /// (`client_secret_post`), or a public client's bare `client_id` (`none`).
    ///
    /// - Throws: `invalid_client` (401) for an unknown client, a wrong or missing secret, a secret sent by a public
    ///   client; `invalid_request` for two methods at once.
    func authenticateClient(authorization: String?, form: FormParameters, allowPublic: Bool = true) async throws -> AuthenticatedClient {
        var id: String?
        var secret: String?
        var usedBasic = false
        if let authorization, authorization.lowercased().hasPrefix("basic ") {
            usedBasic = true
            let encoded = String(authorization.dropFirst(6).trimmingASCIISpaces)
            guard encoded.utf8.count <= 2048, let decoded = Data(base64Encoded: encoded).flatMap({ String(data: $0, encoding: .utf8) }),
                let colon = decoded.firstIndex(of: ":")
            else {
                throw OAuthFailure(.invalidClient("the Basic credentials are malformed"), basic: true)
            }
            do {
                id = try FormParameters(urlEncoded: "i=" + decoded[..<colon]).single("i")
                secret = try FormParameters(urlEncoded: "s=" + decoded[decoded.index(after: colon)...]).single("s")
            } catch {
                throw OAuthFailure(.invalidClient("the Basic credentials are malformed"), basic: true)
            }
            if try form.single("client_secret") != nil {
                throw OAuthFailure(.invalidRequest("use one client authentication method, not Basic and client_secret together"))
            }
            if let bodyId = try form.single("client_id"), bodyId != id {
                throw OAuthFailure(.invalidRequest("client_id differs from the Basic credentials"))
            }
        } else {
            id = try form.single("client_id")
            secret = try form.single("client_secret")
        }
        guard let id else { throw OAuthFailure(.invalidClient("client authentication is required"), basic: usedBasic) }
        guard id.utf8.count <= AuthorizationRequest.maximumClientIdLength, let client = try await self.store.client(id: id) else {
            throw OAuthFailure(.invalidClient("unknown client"), basic: usedBasic)
        }
        if let secretHash = client.secretHash {
            guard let secret, ConstantTime.equal(Array(Secrets.hash(token: secret).utf8), Array(secretHash.utf8)) else {
                throw OAuthFailure(.invalidClient(secret == nil ? "this client must authenticate with its secret" : "wrong client secret"),
                    basic: usedBasic)
            }
        } else {
            guard secret == nil || secret?.isEmpty == true else {
                throw OAuthFailure(.invalidClient("a public client has no secret"), basic: usedBasic)
            }
            guard allowPublic else { throw OAuthFailure(.invalidClient("a public client cannot use this endpoint"), basic: usedBasic) }
        }
        return AuthenticatedClient(record: client)
    }

    struct AuthenticatedClient: Sendable {
        var record: OAuthClientRecord
        var id: String { self.record.id }
    }

    // MARK: Tokens

    struct IssuedTokens: Sendable {
        var accessToken: String
        var expiresIn: Int
        var idToken: String?
        var scope: String
        /// The access token carries `cnf.jkt` (`token_type` `DPoP`).
        var dpopBound = false
    }

    /// An access token (RFC 9068, with `client_id`, `scope` and `grant_id`) and, for `openid`, an ID token, for a
    /// family's session and user, never outliving the session; with `cnf.jkt` when the token request carried a DPoP
    /// proof (`dpopThumbprint`, its key's thumbprint).
    func mint(
        family: TokenFamilyRecord,
        scopes: [String],
        session: SessionRecord,
        sessionId: String,
        user: UserRecord,
        nonce: String?,
        dpopThumbprint: String?
    ) async throws -> IssuedTokens {
        let issuedAt = Int64(self.now().timeIntervalSince1970.rounded(.down))
        let expiresAt = min(issuedAt + Int64(self.accessTokenLifetime), Int64(session.expiresAt.timeIntervalSince1970.rounded(.down)))
        let scope = scopes.joined(separator: " ")
        let authTime = Int64(family.authTime.timeIntervalSince1970.rounded(.down))
        var audience = self.audiences
        if !audience.contains(family.clientId) { audience.append(family.clientId) }
        let access = AccessTokenClaims(
            issuer: self.issuer,
            subject: user.id,
            audience: audience,
            expiresAt: expiresAt,
            issuedAt: issuedAt,
            tokenId: Base64.urlEncode(self.secrets.randomBytes(16)),
            clientId: family.clientId,
            sessionId: sessionId,
            authenticatedAt: authTime,
            methods: family.amr,
            scope: scope,
            authenticationContext: family.acr,
            grantId: family.id,
            confirmationThumbprint: dpopThumbprint
        )
        let (accessToken, _) = try await self.ring.sign(access, type: accessTokenType)
        self.metrics?.tokenIssued()
        var idToken: String?
        if scopes.contains("openid") {
            let claims = IDTokenClaims(
                iss: self.issuer,
                sub: user.id,
                aud: family.clientId,
                exp: expiresAt,
                iat: issuedAt,
                auth_time: authTime,
                nonce: nonce,
                amr: family.amr,
                acr: family.acr,
                sid: sessionId,
                email: scopes.contains("email") ? user.email : nil,
                email_verified: scopes.contains("email") ? user.emailVerifiedAt != nil : nil,
                name: scopes.contains("profile") ? user.displayName : nil
            )
            idToken = try await self.ring.sign(claims, type: "JWT").token
        }
        return IssuedTokens(
            accessToken: accessToken, expiresIn: Int(expiresAt - issuedAt), idToken: idToken, scope: scope, dpopBound: dpopThumbprint != nil)
    }
}

/// The claims of an ID token (OpenID Connect Core §2, §5.1).
struct IDTokenClaims: JWTPayload, Equatable {
    var iss: String
    var sub: String
    var aud: String
    var exp: Int64
    var iat: Int64
    var auth_time: Int64
    var nonce: String?
    var amr: [String]
    var acr: String?
    var sid: String
    var email: String?
    var email_verified: Bool?
    var name: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// An OAuth error on its way to the client: the error, and whether the client used HTTP Basic (so a 401 names the
/// scheme in `WWW-Authenticate`).
struct OAuthFailure: Error {
    var error: OpenIDError
    var basic: Bool

    init(_ error: OpenIDError, basic: Bool = false) {
        self.error = error
        self.basic = basic
    }
}
