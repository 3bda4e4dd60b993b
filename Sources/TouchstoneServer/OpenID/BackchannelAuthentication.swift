import Foundation
import TouchstoneOpenID
import TouchstoneStore

/// OpenID Connect Client-Initiated Backchannel Authentication (CIBA Core 1.0), poll mode: a client's backend asks
/// Touchstone to sign a user in (`POST /oauth2/bc-authorize`); the user approves on their phone (the phone-approval
/// flow of issue #34, with the binding message instead of number matching); the client polls the token endpoint with
/// `grant_type=urn:openid:params:grant-type:ciba`.
struct BackchannelAuthentication: Sendable {
    let provider: OpenIDProvider
    let phoneApproval: PhoneApprovalService
    let sessions: SessionManager

    struct Started: Sendable {
        var authReqId: String
        var expiresIn: Int
        var interval: Int
    }

    /// §7: checks the request and the user, and starts the approval.
    ///
    /// - Throws: `unauthorized_client` (a client not registered with `--ciba`), `invalid_request`, `invalid_scope`,
    ///   `invalid_binding_message`, `unknown_user_id`, `access_denied` (the account's phone approvals are paused).
    func authorize(_ form: FormParameters, client: OAuthClientRecord) async throws -> Started {
        guard client.ciba else {
            throw OAuthFailure(.unauthorizedClient("this client is not registered for backchannel authentication (touchstone clients create --ciba)"))
        }
        let settings = self.phoneApproval.settings
        let request = try BackchannelAuthenticationRequest(form, expiries: 10...600)
        let user: UserRecord?
        if request.loginHint.contains("@") {
            let email = try? InputRules.email(request.loginHint, field: "login_hint")
            user = try await email.asyncMap { try await self.provider.store.user(email: $0) } ?? nil
        } else {
            user = try await self.provider.store.user(id: request.loginHint)
        }
        guard let user else { throw OAuthFailure(.unknownUserId("login_hint names no user of this provider")) }
        let lifetime = TimeInterval(request.requestedExpiry ?? Int(settings.requestTTL))
        do {
            let created = try await self.phoneApproval.createBackchannel(
                client: client, user: user, scope: request.scopes.joined(separator: " "), bindingMessage: request.bindingMessage, lifetime: lifetime)
            return Started(authReqId: created.pollToken, expiresIn: Int(lifetime), interval: settings.cibaInterval)
        } catch let error as APIError where error == .phoneApprovalPaused {
            throw OAuthFailure(.accessDenied("phone approvals are paused for this user"))
        }
    }

    /// §10–11: the token endpoint's answer to a poll.
    ///
    /// - Throws: `authorization_pending`, `slow_down` (a poll sooner than the interval after the last), `expired_token`,
    ///   `access_denied` (declined), `invalid_grant` (unknown, another client's, or already exchanged).
    func token(authReqId: String, client: OAuthClientRecord, dpopThumbprint: String?) async throws -> OpenIDTokenService.Issued {
        guard authReqId.utf8.count <= 256,
            let record = try await self.provider.store.signInRequest(pollTokenHash: Secrets.hash(token: authReqId)),
            record.kind == .backchannel, record.clientId == client.id, let userId = record.userId
        else {
            throw OAuthFailure(.invalidGrant("unknown auth_req_id"))
        }
        let now = self.provider.now()
        switch record.status {
        case .pending:
            guard now < record.expiresAt else { throw OAuthFailure(.expiredToken("the request expired before the user decided")) }
            let interval = TimeInterval(self.phoneApproval.settings.cibaInterval)
            guard try await self.provider.store.recordSignInRequestPoll(id: record.id, interval: interval, at: now) else {
                throw OAuthFailure(.slowDown("poll at most every \(self.phoneApproval.settings.cibaInterval) seconds"))
            }
            throw OAuthFailure(.authorizationPending("the user has not decided yet"))
        case .declined:
            throw OAuthFailure(.accessDenied("the user declined on their phone"))
        case .approved:
            guard record.redeemedAt == nil else { throw OAuthFailure(.invalidGrant("this auth_req_id was already exchanged for tokens")) }
            guard now < record.expiresAt.addingTimeInterval(self.phoneApproval.settings.redemptionGrace) else {
                throw OAuthFailure(.expiredToken("the approval was not collected before the request expired"))
            }
        }
        guard let user = try await self.provider.store.user(id: userId) else { throw OAuthFailure(.invalidGrant("the user no longer exists")) }
        // A session for the approval (its sid is the tokens'), never handed out: signing the user out ends the tokens.
        var (_, made) = self.sessions.make(forUserId: userId, method: .phoneApproval, registrationId: record.registrationId)
        let sessionId = self.provider.secrets.newIdentifier()
        made.id = sessionId
        let session = made
        let scope = record.scope ?? "openid"
        let scopes = scope.split(separator: " ").map(String.init)
        let family = TokenFamilyRecord(
            id: self.provider.secrets.newIdentifier(),
            clientId: client.id,
            userId: userId,
            sessionId: sessionId,
            scope: scope,
            authTime: session.authenticatedAt,
            amr: TokenService.authenticationMethodReferences(session.methods),
            acr: nil,
            createdAt: now
        )
        let refresh = scopes.contains("offline_access") ? self.provider.secrets.newToken() : nil
        let event = self.provider.audit.event(
            .phoneApprovalLogin, userId: userId, registrationId: record.registrationId, reason: "request \(record.id) client \(client.id)")
        let issued = try await self.provider.store.unitOfWork { tx -> Bool in
            guard try await tx.redeemSignInRequest(id: record.id, at: now) else { return false }
            try await tx.insertSession(session)
            try await tx.insertTokenFamily(family)
            if let refresh {
                try await tx.insertRefreshToken(
                    RefreshTokenRecord(tokenHash: Secrets.hash(token: refresh), familyId: family.id, scope: scope, createdAt: now))
            }
            try await tx.insertAuditEvent(event)
            return true
        }
        guard issued else { throw OAuthFailure(.invalidGrant("this auth_req_id was already exchanged for tokens")) }
        self.provider.audit.committed([event])
        let tokens = try await self.provider.mint(family: family, scopes: scopes, session: session, sessionId: sessionId, user: user, nonce: nil,
            dpopThumbprint: dpopThumbprint)
        return OpenIDTokenService.Issued(tokens: tokens, refreshToken: refresh)
    }
}
