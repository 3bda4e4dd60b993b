import Foundation
import Logging
public import TouchstoneStore

/// The caller of a protected route, as the session authenticator found it.
public struct AuthenticatedSession: Sendable {
    public var token: String
    public var session: SessionRecord
    public var user: UserRecord
}

/// Creates, checks and ends sessions.
struct SessionManager: Sendable {
    let store: any SessionStore & UserStore & RegistrationStore & PasskeyStore
    let secrets: Secrets
    let now: @Sendable () -> Date
    /// Session lifetimes come from the runtime policy.
    let policy: PolicyProvider
    /// `TOUCHSTONE_REQUIRE_VERIFIED_EMAIL`: enrolments wait for a verified address.
    var requireVerifiedEmail = false

    private var lifetime: TimeInterval { self.policy.current.sessionLifetime }
    private var idleTimeout: TimeInterval { self.policy.current.sessionIdleTimeout }

    /// Starts a session for `user`, never longer than the configured lifetime.
    func create(
        for user: UserRecord,
        method: AuthenticationMethod,
        registrationId: String? = nil,
        requestedLifetime: TimeInterval? = nil
    ) async throws -> (token: String, record: SessionRecord) {
        let (token, record) = self.make(for: user, method: method, registrationId: registrationId, requestedLifetime: requestedLifetime)
        try await self.store.insertSession(record)
        return (token, record)
    }

    /// A new session and its token, not yet stored (for a caller that stores it in a transaction of its own).
    func make(
        for user: UserRecord,
        method: AuthenticationMethod,
        registrationId: String? = nil,
        requestedLifetime: TimeInterval? = nil
    ) -> (token: String, record: SessionRecord) {
        self.make(forUserId: user.id, method: method, registrationId: registrationId, requestedLifetime: requestedLifetime)
    }

    /// ``make(for:method:registrationId:requestedLifetime:)`` for a user known by id only (a session names its user
    /// by id; the store checks the user exists when it stores the session).
    func make(
        forUserId userId: String,
        method: AuthenticationMethod,
        registrationId: String? = nil,
        requestedLifetime: TimeInterval? = nil
    ) -> (token: String, record: SessionRecord) {
        let now = self.now()
        let token = self.secrets.newToken()
        let policy = self.policy.current
        let lifetime = min(requestedLifetime ?? policy.sessionLifetime, policy.sessionLifetime)
        let expiresAt = now.addingTimeInterval(lifetime)
        let record = SessionRecord(
            tokenHash: Secrets.hash(token: token),
            userId: userId,
            createdAt: now,
            expiresAt: expiresAt,
            idleExpiresAt: min(now.addingTimeInterval(policy.sessionIdleTimeout), expiresAt),
            authenticatedAt: now,
            strongAuthenticatedAt: self.strongAuthenticationTime(for: method, at: now),
            methods: [method],
            registrationId: registrationId,
            // Where the request that opens it comes from (the user's list of sessions shows it).
            clientAddress: ClientInfo.current.address,
            userAgent: ClientInfo.current.userAgent.map { String($0.prefix(200)) },
            lastSeenAt: now
        )
        return (token, record)
    }

    /// Finds the live session for a bearer token and refreshes its idle deadline (and when it was last seen: both move
    /// in the same steps, so `lastSeenAt` is right to the step).
    ///
    /// - Parameter possession: checks the request's DPoP proof against the session's binding (``SessionAuthenticator``);
    ///   without it a session bound to a phone's proof key is refused (a cookie, a form: places a DPoP proof cannot
    ///   come). Runs before the session counts as used.
    /// - Throws: 401 `unauthenticated` when the token is unknown, revoked, expired or idle-expired, or bound where no
    ///   proof can come; what `possession` throws.
    func authenticate(token: String, possession: ((SessionRecord) async throws -> Void)? = nil) async throws -> AuthenticatedSession {
        let now = self.now()
        guard var session = try await self.store.session(tokenHash: Secrets.hash(token: token)) else {
            throw APIError.unauthenticated("unknown session token")
        }
        guard session.revokedAt == nil else { throw APIError.unauthenticated("the session was signed out") }
        guard now < session.expiresAt else { throw APIError.unauthenticated("the session has expired") }
        guard now < session.idleExpiresAt else { throw APIError.unauthenticated("the session expired after inactivity") }
        if let possession {
            try await possession(session)
        } else if session.dpopThumbprint != nil {
            throw APIError.unauthenticated("this session is bound to a phone's key and works only with its DPoP proofs")
        }
        guard let user = try await self.store.user(id: session.userId) else {
            throw APIError.unauthenticated("the account no longer exists")
        }
        let idleExpiresAt = min(now.addingTimeInterval(self.idleTimeout), session.expiresAt)
        // The deadline moves in steps (a minute, or a fifteenth of a short idle timeout), not on every request: a
        // session in use costs a write a minute instead of one per request, and ends at most a step early.
        let step = min(60, self.idleTimeout / 15)
        if idleExpiresAt.timeIntervalSince(session.idleExpiresAt) >= step || (idleExpiresAt == session.expiresAt && idleExpiresAt > session.idleExpiresAt) {
            try await self.store.updateSessionIdleExpiry(tokenHash: session.tokenHash, idleExpiresAt: idleExpiresAt, lastSeenAt: now)
            session.idleExpiresAt = idleExpiresAt
            session.lastSeenAt = now
        }
        return AuthenticatedSession(token: token, session: session, user: user)
    }

    /// The proofs that are strong (issue #42): a password, a passkey with user verification, a device key (a biometric
    /// sign-in, or a sign-in approved on the phone with one). A PIN, a mailed code or a recovery code never is.
    static let strongMethods: Set<AuthenticationMethod> = [.password, .passkey, .biometric, .phoneApproval]

    /// How long a session opened by a mailed code or a recovery code may enrol its one device key or passkey.
    static let codeEnrolmentWindow: TimeInterval = 600

    /// The strong-proof time a new session starts with: now for a strong method; for a passkey, only when the
    /// authenticator verified the user (the passkey path passes `userVerified`).
    func strongAuthenticationTime(for method: AuthenticationMethod, at now: Date, userVerified: Bool = true) -> Date? {
        Self.strongMethods.contains(method) && (method != .passkey || userVerified) ? now : nil
    }

    /// Privileged operations (docs/security.md, "Fresh strong authentication"): a strong proof made within `window`
    /// in this session, at sign-in or through `POST /v1/session/reauthenticate`.
    ///
    /// - Throws: 403 `reauthentication_required`.
    func requireFreshStrongAuthentication(_ caller: AuthenticatedSession, within window: TimeInterval) throws {
        guard let provenAt = caller.session.strongAuthenticatedAt, self.now().timeIntervalSince(provenAt) <= window else {
            throw APIError.reauthenticationRequired
        }
    }

    /// Enrolling a device key or a passkey: fresh strong authentication, or a session opened with a mailed code or a
    /// recovery code within ``codeEnrolmentWindow`` that has not enrolled anything yet (one new device or passkey after
    /// a lost phone).
    ///
    /// - Throws: 403 `reauthentication_required`.
    func requireEnrolmentAllowed(_ caller: AuthenticatedSession, within window: TimeInterval) async throws {
        if (try? self.requireFreshStrongAuthentication(caller, within: window)) != nil { return }
        let session = caller.session
        guard session.methods == [.recoveryCode] || session.methods == [.emailCode],
            self.now().timeIntervalSince(session.authenticatedAt) <= Self.codeEnrolmentWindow
        else {
            throw APIError.reauthenticationRequired
        }
        let since = session.authenticatedAt
        let devices = try await self.store.registrations(userId: caller.user.id).filter { $0.status != .pending && $0.createdAt >= since }
        let passkeys = try await self.store.passkeys(userId: caller.user.id).filter { $0.createdAt >= since }
        guard devices.isEmpty && passkeys.isEmpty else {
            throw APIError.recoveryEnrolmentUsed
        }
    }

    /// Removing a credential (a device key, a passkey): any session but one opened by a mailed code or a recovery
    /// code, which proves the mailbox or a paper code, not the account's credentials.
    ///
    /// - Throws: 403 `reauthentication_required`.
    func requireNotCodeSession(_ caller: AuthenticatedSession, within window: TimeInterval) throws {
        let methods = caller.session.methods
        guard methods.contains(.recoveryCode) || methods.contains(.emailCode) else { return }
        try self.requireFreshStrongAuthentication(caller, within: window)
    }

    /// Enrolling a device or a passkey, with `TOUCHSTONE_REQUIRE_VERIFIED_EMAIL=on`, needs a verified address.
    ///
    /// - Throws: 403 `email_not_verified`.
    func requireVerifiedEmailForEnrolment(_ caller: AuthenticatedSession) throws {
        if self.requireVerifiedEmail && caller.user.emailVerifiedAt == nil { throw APIError.emailNotVerified }
    }

    func revoke(_ session: AuthenticatedSession) async throws {
        try await self.store.revokeSession(tokenHash: session.session.tokenHash, at: self.now())
    }
}
