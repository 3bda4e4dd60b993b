import Foundation
import JWTKit
import TouchstoneAuth
import TouchstoneDPoP
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
    /// - Parameter proof: the request's DPoP proof, if it carried one, its `jti` recorded here with the code's
    ///   redemption (a replayed proof uses up no code): the access token is bound to its key, and so are a public
    ///   client's refresh tokens (RFC 9449 §5).
    /// - Throws: `invalid_grant` for an unknown, expired or used code, another client's, another `redirect_uri`, a
    ///   wrong verifier, or a session that ended. A second use of a code revokes everything issued from it.
    ///   `DPoPError` when the code was bound to a key (`dpop_jkt`) the proof is not from.
    func exchange(code: String, redirectURI: String, verifier: String, client: OAuthClientRecord, proof: DPoPGate.UnrecordedProof?)
        async throws -> Issued
    {
        let now = self.provider.now()
        let dpopThumbprint = proof?.thumbprint
        guard code.utf8.count <= 256 else { throw OAuthFailure(.invalidGrant("unknown authorization code")) }
        let codeHash = Secrets.hash(token: code)
        let redemption: AuthorizationCodeRedemption
        if let proof {
            redemption = try await self.provider.store.unitOfWork { tx in
                try await proof.record(in: tx)
                return try await tx.redeemAuthorizationCode(codeHash: codeHash, at: now)
            }
        } else {
            redemption = try await self.provider.store.redeemAuthorizationCode(codeHash: codeHash, at: now)
        }
        let record: AuthorizationCodeRecord
        switch redemption {
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
        if let bound = record.dpopThumbprint, bound != dpopThumbprint {
            throw dpopThumbprint == nil
                ? DPoPError(.missing, "the code is bound to a DPoP key (dpop_jkt): send a proof from it")
                : DPoPError(.keyMismatch, "the proof's key is not the one dpop_jkt named")
        }
        guard let (session, user) = try await self.provider.liveSession(id: record.sessionId), user.id == record.userId else {
            throw OAuthFailure(.invalidGrant("the sign-in behind the code has ended"))
        }
        var family = TokenFamilyRecord(
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
        // A public client's refresh tokens are bound to its key; a confidential client's are bound by its secret.
        family.dpopThumbprint = client.isPublic ? dpopThumbprint : nil
        let newFamily = family
        let scopes = record.scope.split(separator: " ").map(String.init)
        let refresh = scopes.contains("offline_access") ? self.provider.secrets.newToken() : nil
        // The family and its first refresh token are stored together, before any token leaves.
        do {
            try await self.provider.store.unitOfWork { tx in
                try await tx.insertTokenFamily(newFamily)
                if let refresh {
                    try await tx.insertRefreshToken(
                        RefreshTokenRecord(tokenHash: Secrets.hash(token: refresh), familyId: newFamily.id, scope: record.scope, createdAt: now))
                }
            }
        } catch let error as StoreError where error == .conflict {
            throw OAuthFailure(.invalidGrant("the authorization code was already used; the tokens issued from it are revoked"))
        }
        let tokens = try await self.provider.mint(
            family: family, scopes: scopes, session: session, sessionId: record.sessionId, user: user, nonce: record.nonce,
            dpopThumbprint: dpopThumbprint)
        return Issued(tokens: tokens, refreshToken: refresh)
    }

    /// `grant_type=refresh_token`: the token is rotated (the answer has a new one; this one is dead).
    ///
    /// - Throws: `invalid_grant` for an unknown token, another client's, a revoked family, an ended session; a used
    ///   token is a reuse: its family is revoked and its Touchstone session ended. `invalid_scope` for a scope wider
    ///   than the family's. A token bound to a DPoP key (a public client's) needs a proof from that key: without it,
    ///   `invalid_grant`, and the token stays unused (whoever sent it does not hold the key). The proof's `jti` is
    ///   recorded in the rotation's transaction (one commit; a replayed proof rolls the rotation back).
    func refresh(token: String, scope: String?, client: OAuthClientRecord, proof: DPoPGate.UnrecordedProof?) async throws -> Issued {
        let now = self.provider.now()
        let dpopThumbprint = proof?.thumbprint
        guard token.utf8.count <= 256 else { throw OAuthFailure(.invalidGrant("unknown refresh token")) }
        let next = self.provider.secrets.newToken()
        enum Outcome: Sendable {
            case rotated(TokenFamilyRecord)
            case reused(TokenFamilyRecord?)
            case refused(OpenIDError)
        }
        /// Thrown inside the unit of work so that it rolls back: the token's use is not kept.
        struct OtherKey: Error {}
        let outcome: Outcome
        do {
            outcome = try await self.provider.store.unitOfWork { tx in
                try await proof?.record(in: tx)
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
                    if let bound = family.dpopThumbprint, bound != dpopThumbprint { throw OtherKey() }
                    try await tx.insertRefreshToken(
                        RefreshTokenRecord(tokenHash: Secrets.hash(token: next), familyId: family.id, scope: used.scope, createdAt: now))
                    return .rotated(family)
                }
            }
        } catch is OtherKey {
            throw OAuthFailure(.invalidGrant(dpopThumbprint == nil
                ? "the refresh token is bound to a DPoP key: send a proof from it" : "the refresh token is bound to another DPoP key"))
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
            nonce: nil, dpopThumbprint: dpopThumbprint)
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
