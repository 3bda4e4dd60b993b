import Foundation
import JWTKit
import TouchstoneAuth
import TouchstoneOpenID
import TouchstoneStore

/// The token endpoint's grants and revocation: codes for tokens (single use, PKCE), refresh-token rotation with
/// reuse detection (RFC 9700 §4.14.2), and revocation (RFC 7009).
struct OpenIDTokenService: Sendable {
    let provider: OpenIDProvider

    struct Issued: Sendable {
        var tokens: OpenIDProvider.IssuedTokens
        var refreshToken: String?
    }

    /// `grant_type=authorization_code`.
    ///
    /// - Throws: `invalid_grant` for an unknown, expired or used code, another client's, another `redirect_uri`, a
    ///   wrong verifier, or a session that ended. A second use of a code revokes everything issued from it.
    func exchange(code: String, redirectURI: String, verifier: String, client: OAuthClientRecord) async throws -> Issued {
        let now = self.provider.now()
        guard code.utf8.count <= 256 else { throw OAuthFailure(.invalidGrant("unknown authorization code")) }
        let record: AuthorizationCodeRecord
        switch try await self.provider.store.redeemAuthorizationCode(codeHash: Secrets.hash(token: code), at: now) {
        case .unknown:
            throw OAuthFailure(.invalidGrant("unknown authorization code"))
        case .replayed(let used):
            // RFC 6749 §4.1.2: the tokens issued from the code are revoked. When the first exchange has not stored
            // its family yet (the two raced), a revoked placeholder takes the family's id, so that exchange fails.
            if !(try await self.provider.store.revokeTokenFamily(id: used.familyId, at: now)) {
                let placeholder = TokenFamilyRecord(
                    id: used.familyId, clientId: used.clientId, userId: used.userId, sessionId: used.sessionId, scope: used.scope,
                    authTime: used.authTime, amr: used.amr, acr: used.acr, createdAt: now, revokedAt: now)
                do {
                    try await self.provider.store.insertTokenFamily(placeholder)
                } catch let error as StoreError where error == .conflict {
                    _ = try await self.provider.store.revokeTokenFamily(id: used.familyId, at: now)
                }
            }
            try await self.provider.audit.record(.codeReplayed, .failure, userId: used.userId, reason: "client \(used.clientId)")
            throw OAuthFailure(.invalidGrant("the authorization code was already used; the tokens issued from it are revoked"))
        case .redeemed(let redeemed):
            record = redeemed
        }
        // The code is used up now, whatever follows: one attempt per code.
        guard record.clientId == client.id else { throw OAuthFailure(.invalidGrant("the authorization code was issued to another client")) }
        guard now < record.expiresAt else { throw OAuthFailure(.invalidGrant("the authorization code has expired")) }
        guard record.redirectURI == redirectURI else {
            throw OAuthFailure(.invalidGrant("redirect_uri differs from the authorization request's"))
        }
        guard PKCE.verify(verifier: verifier, challenge: record.codeChallenge) else {
            throw OAuthFailure(.invalidGrant("code_verifier does not match the code_challenge"))
        }
        guard let (session, user) = try await self.provider.liveSession(id: record.sessionId), user.id == record.userId else {
            throw OAuthFailure(.invalidGrant("the sign-in behind the code has ended"))
        }
        let family = TokenFamilyRecord(
            id: record.familyId,
            clientId: client.id,
            userId: user.id,
            sessionId: record.sessionId,
            scope: record.scope,
            authTime: record.authTime,
            amr: record.amr,
            acr: record.acr,
            createdAt: now
        )
        let scopes = record.scope.split(separator: " ").map(String.init)
        let refresh = scopes.contains("offline_access") ? self.provider.secrets.newToken() : nil
        // The family and its first refresh token are stored together, before any token leaves.
        do {
            try await self.provider.store.unitOfWork { tx in
                try await tx.insertTokenFamily(family)
                if let refresh {
                    try await tx.insertRefreshToken(
                        RefreshTokenRecord(tokenHash: Secrets.hash(token: refresh), familyId: family.id, scope: record.scope, createdAt: now))
                }
            }
        } catch let error as StoreError where error == .conflict {
            throw OAuthFailure(.invalidGrant("the authorization code was already used; the tokens issued from it are revoked"))
        }
        let tokens = try await self.provider.mint(
            family: family, scopes: scopes, session: session, sessionId: record.sessionId, user: user, nonce: record.nonce)
        return Issued(tokens: tokens, refreshToken: refresh)
    }

    /// `grant_type=refresh_token`: the token is rotated (the answer has a new one; this one is dead).
    ///
    /// - Throws: `invalid_grant` for an unknown token, another client's, a revoked family, an ended session; a used
    ///   token is a reuse: its family is revoked and its Touchstone session ended. `invalid_scope` for a scope wider
    ///   than the family's.
    func refresh(token: String, scope: String?, client: OAuthClientRecord) async throws -> Issued {
        let now = self.provider.now()
        guard token.utf8.count <= 256 else { throw OAuthFailure(.invalidGrant("unknown refresh token")) }
        let next = self.provider.secrets.newToken()
        enum Outcome: Sendable {
            case rotated(TokenFamilyRecord)
            case reused(TokenFamilyRecord?)
            case refused(OpenIDError)
        }
        let outcome: Outcome = try await self.provider.store.unitOfWork { tx in
            switch try await tx.useRefreshToken(tokenHash: Secrets.hash(token: token), at: now) {
            case .unknown:
                return .refused(.invalidGrant("unknown refresh token"))
            case .reused(let used):
                return .reused(try await tx.tokenFamily(id: used.familyId))
            case .fresh(let used):
                guard let family = try await tx.tokenFamily(id: used.familyId), family.clientId == client.id else {
                    return .refused(.invalidGrant("the refresh token was issued to another client"))
                }
                guard family.isLive else { return .refused(.invalidGrant("the refresh token was revoked")) }
                try await tx.insertRefreshToken(
                    RefreshTokenRecord(tokenHash: Secrets.hash(token: next), familyId: family.id, scope: used.scope, createdAt: now))
                return .rotated(family)
            }
        }
        let family: TokenFamilyRecord
        switch outcome {
        case .refused(let error):
            throw OAuthFailure(error)
        case .reused(let family):
            if let family { try await self.reuseDetected(family, at: now) }
            throw OAuthFailure(.invalidGrant("the refresh token was already used; its grant is revoked and its session ended"))
        case .rotated(let rotated):
            family = rotated
        }
        let granted = family.scope.split(separator: " ").map(String.init)
        var scopes = granted
        if let scope {
            let requested = try Scopes.parse(scope)
            guard Set(requested).isSubset(of: granted) else {
                throw OAuthFailure(.invalidScope("the refresh may narrow the granted scopes, never widen them"))
            }
            scopes = requested
        }
        guard let (session, user) = try await self.provider.liveSession(id: family.sessionId), user.id == family.userId else {
            throw OAuthFailure(.invalidGrant("the session behind the refresh token has ended"))
        }
        let tokens = try await self.provider.mint(family: family, scopes: scopes, session: session, sessionId: family.sessionId, user: user,
            nonce: nil)
        return Issued(tokens: tokens, refreshToken: next)
    }

    /// A used refresh token came back: someone else holds a copy. The family dies, and with it the Touchstone session
    /// (which in turn owes the clients holding tokens for it a back-channel logout).
    private func reuseDetected(_ family: TokenFamilyRecord, at now: Date) async throws {
        _ = try await self.provider.store.revokeTokenFamily(id: family.id, at: now)
        if let session = try await self.provider.store.session(id: family.sessionId) {
            _ = try await self.provider.store.revokeSession(tokenHash: session.tokenHash, at: now)
        }
        try await self.provider.audit.record(.refreshTokenReused, .failure, userId: family.userId, reason: "client \(family.clientId)")
    }

    /// RFC 7009: a refresh token's family dies; an access token is refused by introspection and UserInfo until it would
    /// have expired. Unknown tokens and other clients' tokens are ignored (the answer is 200 either way).
    func revoke(token: String, client: OAuthClientRecord) async throws {
        let now = self.provider.now()
        guard token.utf8.count <= SignedToken.maximumLength else { return }
        if let refresh = try await self.provider.store.refreshToken(tokenHash: Secrets.hash(token: token)) {
            if let family = try await self.provider.store.tokenFamily(id: refresh.familyId), family.clientId == client.id {
                _ = try await self.provider.store.revokeTokenFamily(id: family.id, at: now)
            }
            return
        }
        let verifier = AccessTokenVerifier(
            keys: try await self.provider.ring.verificationKeys(),
            issuer: self.provider.issuer,
            audiences: nil,
            leeway: 0,
            now: self.provider.now
        )
        guard let claims = try? await verifier.verify(token), claims.clientId == client.id else { return }
        try await self.provider.store.revokeAccessToken(jti: claims.tokenId, expiresAt: Date(timeIntervalSince1970: TimeInterval(claims.expiresAt)))
    }
}
