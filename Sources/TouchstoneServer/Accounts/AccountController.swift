import Foundation
import Hummingbird
import TouchstoneStore
import TouchstoneWebhooks

/// Accounts and password sessions: `POST /v1/users`, `POST /v1/sessions`, `GET|DELETE /v1/session`.
struct AccountController {
    typealias Context = TouchstoneRequestContext

    let store: any TouchstoneStore
    let sessions: SessionManager
    let hasher: PasswordHasher
    let secrets: Secrets
    let now: @Sendable () -> Date
    let limiter: RateLimiter
    let audit: AuditLog
    let reauthenticationWindow: TimeInterval
    /// Mails the new account's verification code and link (issue #33).
    let recovery: RecoveryService
    /// `TOUCHSTONE_SIGN_UP`: false refuses sign-up before its body is read.
    let signUpEnabled: Bool

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let limited = router.group().add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "password"))
        limited.post("/v1/users", use: self.createUser)
        limited.post("/v1/sessions", use: self.signIn)
        let session = router.group("/v1/session").add(middleware: authenticator)
        session.get(use: self.currentSession)
        session.delete(use: self.signOut)
        session.get("/events", use: self.events)
        session.put("/password", use: self.changePassword)
        session.delete("/password", use: self.removePassword)
    }

    struct CreateUserInput: Decodable {
        var email: String
        var password: InputRules.Password
        var displayName: String?

        enum CodingKeys: CodingKey { case email, password, displayName }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.email = try container.decodeEmail(.email)
            self.password = try container.decodePassword(.password, isNew: true)
            self.displayName = try container.decodeDisplayTextIfPresent(.displayName)
        }
    }

    @Sendable func createUser(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        guard self.signUpEnabled else { throw APIError.signUpDisabled }
        let input = try await request.decodeJSON(as: CreateUserInput.self, context: context)
        let (user, token, session) = try await self.passwordSignUp.signUp(email: input.email, password: input.password, displayName: input.displayName)
        return JSONResponse(.created, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }

    var passwordSignUp: PasswordSignUp {
        PasswordSignUp(store: self.store, sessions: self.sessions, hasher: self.hasher, secrets: self.secrets, now: self.now,
            limiter: self.limiter, audit: self.audit, recovery: self.recovery)
    }

    struct SignInInput: Decodable {
        var email: String
        var password: InputRules.Password

        enum CodingKeys: CodingKey { case email, password }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.email = try container.decodeEmail(.email)
            self.password = try container.decodePassword(.password, isNew: false)
        }
    }

    @Sendable func signIn(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        let input = try await request.decodeJSON(as: SignInInput.self, context: context)
        let signIn = PasswordSignIn(store: self.store, hasher: self.hasher, limiter: self.limiter, audit: self.audit)
        let (user, token, session) = try await signIn.signIn(email: input.email, password: input.password, client: context.client) { user, tx in
            let (token, session) = self.sessions.make(for: user, method: .password)
            try await tx.insertSession(session)
            return ((user, token, session), sessionCreated: true)
        }
        return JSONResponse(.ok, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }

    @Sendable func currentSession(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        let identity = try context.requireIdentity()
        return JSONResponse(
            .ok,
            SignedIn(user: UserResource(identity.user), session: SessionResource(token: identity.token, record: identity.session))
        )
    }

    @Sendable func signOut(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        try await self.sessions.revoke(identity)
        try await self.audit.record(.sessionRevoked, userId: identity.user.id, registrationId: identity.session.registrationId)
        return .noContent
    }

    struct ChangePasswordInput: Decodable {
        var newPassword: InputRules.Password

        enum CodingKeys: CodingKey { case newPassword }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.newPassword = try container.decodePassword(.newPassword, isNew: true)
        }
    }

    struct PasswordChanged: Encodable { var revokedSessions: Int }

    /// `PUT /v1/session/password` `{"newPassword"}`: needs fresh strong authentication (a PIN or code session never
    /// qualifies). Every other session of the user is signed out.
    @Sendable func changePassword(request: Request, context: Context) async throws -> JSONResponse<PasswordChanged> {
        let identity = try context.requireIdentity()
        try self.sessions.requireFreshStrongAuthentication(identity, within: self.reauthenticationWindow)
        let input = try await request.decodeJSON(as: ChangePasswordInput.self, context: context)
        let passwordHash = try await self.hasher.hash(input.newPassword)
        let userId = identity.user.id, keeping = identity.session.tokenHash, now = self.now()
        // The new hash, the other sessions' end and the event (with its webhook) commit together.
        let event = self.audit.event(.passwordChanged, userId: userId, notify: identity.user.email)
        let revoked = try await self.store.unitOfWork { tx -> Int? in
            guard try await tx.updatePassword(userId: userId, passwordHash: passwordHash) else { return nil }
            let revoked = try await tx.revokeSessions(userId: userId, keeping: keeping, at: now)
            try await tx.insertAuditEvent(event)
            return revoked
        }
        guard let revoked else { throw APIError.unauthenticated("the account no longer exists") }
        self.audit.committed([event])
        return JSONResponse(.ok, PasswordChanged(revokedSessions: revoked))
    }

    /// `DELETE /v1/session/password`: removes the password of an account that keeps a usable passkey or an active
    /// device key (fresh strong authentication); every other session is signed out and the address is told. The row
    /// lock serialises it with the removal of passkeys and device keys, so the account never loses its last way in.
    @Sendable func removePassword(request: Request, context: Context) async throws -> JSONResponse<PasswordChanged> {
        let identity = try context.requireIdentity()
        try self.sessions.requireFreshStrongAuthentication(identity, within: self.reauthenticationWindow)
        let userId = identity.user.id, keeping = identity.session.tokenHash, now = self.now()
        let event = self.audit.event(.passwordRemoved, userId: userId, notify: identity.user.email)
        let revoked = try await self.store.unitOfWork { tx -> Int in
            guard try await tx.lockUser(id: userId) else { throw APIError.unauthenticated("the account no longer exists") }
            let credentials = try await tx.credentials(userId: userId)
            guard credentials.hasPassword else { throw APIError.passwordNotSet }
            guard !credentials.usablePasskeyIds.isEmpty || !credentials.activeRegistrationIds.isEmpty else { throw APIError.lastCredential }
            _ = try await tx.updatePassword(userId: userId, passwordHash: nil)
            let revoked = try await tx.revokeSessions(userId: userId, keeping: keeping, at: now)
            try await tx.insertAuditEvent(event)
            return revoked
        }
        self.audit.committed([event])
        return JSONResponse(.ok, PasswordChanged(revokedSessions: revoked))
    }

    /// The caller's own audit trail, newest first: `?limit=` (1-100, default 50) and `?cursor=` from the last page.
    @Sendable func events(request: Request, context: Context) async throws -> JSONResponse<AuditEventPage> {
        let identity = try context.requireIdentity()
        var query = try AuditPaging.query(from: request.uri.queryParameters, maximumLimit: 100)
        query.userId = identity.user.id
        return JSONResponse(.ok, try await AuditPaging.page(query, store: self.store))
    }
}
