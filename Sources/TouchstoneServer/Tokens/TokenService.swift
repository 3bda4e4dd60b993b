import Foundation
import TouchstoneAuth
import TouchstoneCrypto
import TouchstoneStore

/// Access tokens: issued from a live session, verified (with the session's state) for introspection.
struct TokenService: Sendable {
    let ring: SigningKeyRing
    let store: any SessionStore & UserStore & AuthorizationStore
    let secrets: Secrets
    let now: @Sendable () -> Date
    let issuer: String
    let audiences: [String]
    let clientId: String
    let lifetime: TimeInterval
    var metrics: ServerMetrics? = nil

    /// An access token for the caller's session: short-lived, never stored, never past the session's own end; bound to
    /// the DPoP key `dpopThumbprint` (`cnf.jkt`) when one is given.
    func issueAccessToken(for identity: AuthenticatedSession, dpopThumbprint: String? = nil) async throws -> (token: String, expiresIn: Int) {
        let session = identity.session
        let sessionId: String
        if let id = session.id {
            sessionId = id
        } else {
            // A session from before sessions had ids gets one now.
            guard let id = try await self.store.assignSessionId(tokenHash: session.tokenHash, id: self.secrets.newIdentifier()) else {
                throw APIError.unauthenticated("unknown session token")
            }
            sessionId = id
        }
        let issuedAt = Int64(self.now().timeIntervalSince1970.rounded(.down))
        let expiresAt = min(issuedAt + Int64(self.lifetime), Int64(session.expiresAt.timeIntervalSince1970.rounded(.down)))
        let claims = AccessTokenClaims(
            issuer: self.issuer,
            subject: identity.user.id,
            audience: self.audiences,
            expiresAt: expiresAt,
            issuedAt: issuedAt,
            tokenId: Base64.urlEncode(self.secrets.randomBytes(16)),
            clientId: self.clientId,
            sessionId: sessionId,
            authenticatedAt: Int64(session.authenticatedAt.timeIntervalSince1970.rounded(.down)),
            methods: Self.authenticationMethodReferences(session.methods),
            confirmationThumbprint: dpopThumbprint
        )
        let (token, _) = try await self.ring.sign(claims, type: accessTokenType)
        self.metrics?.tokenIssued()
        return (token, Int(expiresAt - issuedAt))
    }

    /// RFC 8176 `amr` values for how a session was opened: `pwd` (password), `pin` (app PIN), `otp` (a mailed code), `hwk` + `user` (a
    /// device-bound key used after the device checked its user: a biometric device key or a passkey); `mfa` only when
    /// the methods prove factors of two kinds (a knowledge factor and a hardware key), which no single sign-in does.
    static func authenticationMethodReferences(_ methods: [AuthenticationMethod]) -> [String] {
        var values: [String] = []
        func add(_ value: String) { if !values.contains(value) { values.append(value) } }
        for method in methods {
            switch method {
            case .password: add("pwd")
            case .pin: add("pin")
            case .emailCode, .recoveryCode: add("otp")
            case .biometric, .passkey, .phoneApproval:
                add("hwk")
                add("user")
            }
        }
        if (values.contains("pwd") || values.contains("pin")) && values.contains("hwk") { add("mfa") }
        return values
    }

    /// RFC 7662 introspection: the token's claims while its signature, issuer and lifetime hold and its session is
    /// still live (so a sign-out ends its tokens here at once); `nil` for anything else.
    func introspect(_ token: String) async throws -> AccessTokenClaims? {
        let claims = try await self.activeClaims(token)
        self.metrics?.introspected(active: claims != nil)
        return claims
    }

    func activeClaims(_ token: String) async throws -> AccessTokenClaims? {
        try await self.activeClaimsAndUser(token)?.claims
    }

    /// ``activeClaims(_:)`` with the token's user, as read for the check (UserInfo answers from it).
    func activeClaimsAndUser(_ token: String) async throws -> (claims: AccessTokenClaims, user: UserRecord)? {
        let verifier = AccessTokenVerifier(
            keys: try await self.ring.verificationKeys(),
            issuer: self.issuer,
            audiences: nil,
            leeway: 0,
            now: self.now
        )
        guard let claims = try? await verifier.verify(token) else { return nil }
        guard let session = try await self.store.session(id: claims.sessionId), session.userId == claims.subject else { return nil }
        let now = self.now()
        guard session.revokedAt == nil, now < session.expiresAt, now < session.idleExpiresAt else { return nil }
        guard let user = try await self.store.user(id: session.userId) else { return nil }
        // An OpenID client's token also ends with its authorization (a revoked family, a replayed code) and when
        // revoked on its own (RFC 7009).
        if let grantId = claims.grantId {
            guard let family = try await self.store.tokenFamily(id: grantId), family.isLive, family.clientId == claims.clientId else {
                return nil
            }
            guard try await !self.store.isAccessTokenRevoked(jti: claims.tokenId) else { return nil }
        }
        return (claims, user)
    }
}
