public import Foundation

/// Sessions: bearer tokens (stored as hashes), their timeouts, ids and revocation.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol SessionStore: Sendable {
    func insertSession(_ session: SessionRecord) async throws
    /// With ``SessionRecord/dpopThumbprint`` when the session is bound to its registration's proof key; a bound
    /// session whose registration was revoked, invalidated or replaced reads as revoked then.
    func session(tokenHash: String) async throws -> SessionRecord?

    /// Moves a session's idle deadline and records when it was used.
    func updateSessionIdleExpiry(tokenHash: String, idleExpiresAt: Date, lastSeenAt: Date) async throws

    /// Revokes a session; returns whether a live session was revoked. The OpenID token families of the session end
    /// with it (and back-channel logouts become due).
    @discardableResult
    func revokeSession(tokenHash: String, at: Date) async throws -> Bool

    /// Records a new sign-in in a live session (it keeps its id): the time, the methods, the time of a strong proof when
    /// the sign-in was one (kept as it was otherwise), and the ACR; returns whether a live session was updated.
    func reauthenticateSession(
        tokenHash: String,
        at: Date,
        methods: [AuthenticationMethod],
        strongAuthenticatedAt: Date?,
        acr: String?
    ) async throws -> Bool

    /// The user's sessions that have not ended at `at` (not revoked, not expired), newest first.
    func activeSessions(userId: String, at: Date) async throws -> [SessionRecord]

    /// The session with this `sid`, whatever its state.
    func session(id: String) async throws -> SessionRecord?

    /// Gives the session `id` unless it already has one; returns the session's id, or `nil` if there is no such session.
    func assignSessionId(tokenHash: String, id: String) async throws -> String?

    /// Revokes every live session of a user ("sign out everywhere") except `keeping` (a token hash); returns how many.
    func revokeSessions(userId: String, keeping: String?, at: Date) async throws -> Int
}
