import Foundation
import Hummingbird
import TouchstoneStore

/// The user's own sessions (issue #42): `GET /v1/session/sessions`, `DELETE /v1/session/sessions/{id}`,
/// `POST /v1/session/sessions/revoke-others`. Any live session of the account may list and end them (ending sessions
/// is what a user does who fears someone else is signed in, whatever they signed in with). An ended session's OpenID
/// token families end with it, so their clients get back-channel logout tokens, as for any sign-out.
struct SessionListController {
    typealias Context = TouchstoneRequestContext

    let store: any SessionStore & AuthorizationStore
    let secrets: Secrets
    let audit: AuditLog
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let group = router.group("/v1/session/sessions").add(middleware: authenticator)
        group.get(use: self.list)
        group.delete(":id", use: self.end)
        group.post("revoke-others", use: self.revokeOthers)
    }

    /// One session as the list shows it: no token, no hash.
    struct SessionSummary: Encodable {
        var id: String
        var createdAt: String
        var lastSeenAt: String?
        var methods: [String]
        var address: String?
        var userAgent: String?
        /// The OpenID client holding tokens from the session (the most recent, when several do).
        var client: String?
        var current: Bool

        enum CodingKeys: CodingKey { case id, createdAt, lastSeenAt, methods, address, userAgent, client, current }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.id, forKey: .id)
            try container.encode(self.createdAt, forKey: .createdAt)
            try container.encode(self.lastSeenAt, forKey: .lastSeenAt)
            try container.encode(self.methods, forKey: .methods)
            try container.encode(self.address, forKey: .address)
            try container.encode(self.userAgent, forKey: .userAgent)
            try container.encode(self.client, forKey: .client)
            try container.encode(self.current, forKey: .current)
        }
    }

    struct SessionList: Encodable { var sessions: [SessionSummary] }

    @Sendable func list(request: Request, context: Context) async throws -> JSONResponse<SessionList> {
        let identity = try context.requireIdentity()
        return JSONResponse(.ok, SessionList(sessions: try await Self.summaries(of: identity, store: self.store, secrets: self.secrets, now: self.now())))
    }

    /// The account's live sessions as the list (and the data export) shows them.
    static func summaries(of identity: AuthenticatedSession, store: any SessionStore & AuthorizationStore, secrets: Secrets, now: Date)
        async throws -> [SessionSummary]
    {
        var live = try await store.activeSessions(userId: identity.user.id, at: now)
        // A session gets its id when first needed (an access token's `sid`, or this list): each is named by its id.
        for index in live.indices where live[index].id == nil {
            live[index].id = try await store.assignSessionId(tokenHash: live[index].tokenHash, id: secrets.newIdentifier())
        }
        let clients = try await store.openIDClientNames(sessionIds: live.compactMap(\.id))
        return live.compactMap { session -> SessionSummary? in
            guard let id = session.id else { return nil }
            return SessionSummary(
                id: id,
                createdAt: session.createdAt.rfc3339,
                lastSeenAt: session.lastSeenAt?.rfc3339,
                methods: session.methods.map(\.rawValue),
                address: session.clientAddress,
                userAgent: session.userAgent,
                client: clients[id]?.first,
                current: session.tokenHash == identity.session.tokenHash
            )
        }
    }

    /// Ends one of the account's sessions (the caller's own included: that is a sign-out). 404 `session_not_found` for
    /// an unknown id, another account's session, or one that already ended.
    @Sendable func end(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let id = try context.parameters.require("id")
        guard id.utf8.count <= 64, let session = try await self.store.session(id: id), session.userId == identity.user.id else {
            throw APIError.sessionNotFound
        }
        // The revocation and its event commit together; a session that ended meanwhile records nothing.
        let event = self.audit.event(.sessionRevoked, userId: identity.user.id, registrationId: session.registrationId, reason: "user")
        let now = self.now()
        guard try await self.audit.commit(event, when: { tx in try await tx.revokeSession(tokenHash: session.tokenHash, at: now) }) else {
            throw APIError.sessionNotFound
        }
        return .noContent
    }

    struct Revoked: Encodable { var revokedSessions: Int }

    /// Ends every other session of the account ("sign out everywhere else").
    @Sendable func revokeOthers(request: Request, context: Context) async throws -> JSONResponse<Revoked> {
        let identity = try context.requireIdentity()
        let count = try await self.store.revokeSessions(userId: identity.user.id, keeping: identity.session.tokenHash, at: self.now())
        try await self.audit.record(.sessionsRevokedAll, userId: identity.user.id, reason: "user_kept_current")
        return JSONResponse(.ok, Revoked(revokedSessions: count))
    }
}
