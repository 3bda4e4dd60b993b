public import Foundation
import SQLKit
import TouchstoneCrypto

// Sessions: stored by token hash, with their idle and absolute deadlines and revocation.
extension SQLTouchstoneStore {
    public func insertSession(_ session: SessionRecord) async throws {
        try await self.executor.withDatabase { db in try await Self.insert(session, into: db) }
    }

    /// `WITH` entries (each after a comma) inserting `session` and `events` (with their webhook messages) once for
    /// each row of the entry `guard` (which has one row or none): the inserts of a sign-in that completes in one
    /// statement.
    static func sessionAndEvents(_ session: SessionRecord, _ events: [AuditEventRecord], ifRowIn guard: String) -> SQLQueryString {
        var sql: SQLQueryString = """
            , new_session AS (
                INSERT INTO sessions (\(unsafeRaw: SessionRecord.insertColumns))
                SELECT \(binds: session.insertValues) FROM \(unsafeRaw: `guard`)
            )
            """
        for (index, event) in events.enumerated() {
            // A sign-in's events announce (webhooks) but mail nothing; notices come from other changes.
            precondition(event.mails.isEmpty, "a sign-in's events carry no mail")
            sql += """
                , new_event_\(unsafeRaw: String(index)) AS (
                    INSERT INTO audit_events (\(unsafeRaw: AuditEventRecord.insertColumns))
                    SELECT \(binds: event.insertValues) FROM \(unsafeRaw: `guard`)
                )
                """
            for (webhookIndex, webhook) in event.webhooks.enumerated() {
                sql += """
                    , new_webhook_\(unsafeRaw: String(index))_\(unsafeRaw: String(webhookIndex)) AS (
                        INSERT INTO webhook_messages (\(unsafeRaw: Self.outboxColumns))
                        \(Self.outboxSelect(webhook, joining: ", \(`guard`)"))
                    )
                    """
            }
        }
        return sql
    }

    static func insert(_ session: SessionRecord, into db: any SQLDatabase) async throws {
        try await db.raw("INSERT INTO sessions (\(unsafeRaw: SessionRecord.insertColumns)) VALUES (\(binds: session.insertValues))").run()
    }

    public func session(tokenHash: String) async throws -> SessionRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            // The proof key of the registration a phone's own sign-in (device key or PIN) came from: such a session is
            // bound to it (issue #43). Read with the session, so a key added to the registration later binds it at once,
            // and a registration revoked, invalidated or replaced takes its bound sessions with it.
            try await db.hot(
                """
                SELECT \(unsafeRaw: SessionRecord.insertColumns),
                    (SELECT r.proof_jkt FROM registrations r WHERE r.id = sessions.registration_id) AS dpop_jkt,
                    (SELECT r.status_changed_at FROM registrations r
                        WHERE r.id = sessions.registration_id AND r.status NOT IN ('active', 'locked')) AS registration_ended_at
                FROM sessions WHERE token_hash = \(bind: tokenHash)
                """
            ).first.map { row in
                var session = try SessionRecord(row: row)
                if session.methods.contains(where: { $0 == .biometric || $0 == .pin }),
                    let thumbprint = try row.decode(column: "dpop_jkt", as: String?.self)
                {
                    session.dpopThumbprint = thumbprint
                    if session.revokedAt == nil, let ended = try row.optionalDate("registration_ended_at") { session.revokedAt = ended }
                }
                return session
            }
        }
    }

    public func updateSessionIdleExpiry(tokenHash: String, idleExpiresAt: Date, lastSeenAt: Date) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE sessions SET idle_expires_at = \(bind: idleExpiresAt.millis), last_seen_at = \(bind: lastSeenAt.millis)
                WHERE token_hash = \(bind: tokenHash)
                """
            ).run()
        }
    }

    public func revokeSession(tokenHash: String, at: Date) async throws -> Bool {
        try await self.executor.withTransaction { db in
            guard let row = try await db.raw(
                """
                UPDATE sessions SET revoked_at = \(bind: at.millis)
                WHERE token_hash = \(bind: tokenHash) AND revoked_at IS NULL RETURNING id
                """
            ).first() else {
                return false
            }
            if let id = try row.decode(column: "id", as: String?.self) {
                try await Self.endTokenFamilies(sessionIds: [id], at: at, in: db)
            }
            return true
        }
    }

    public func reauthenticateSession(
        tokenHash: String,
        at: Date,
        methods: [AuthenticationMethod],
        strongAuthenticatedAt: Date?,
        acr: String?
    ) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE sessions SET authenticated_at = \(bind: at.millis), methods = \(bind: methods.map(\.rawValue).joined(separator: ",")),
                    strong_authenticated_at = COALESCE(\(bind: strongAuthenticatedAt?.millis), strong_authenticated_at),
                    acr = \(bind: acr)
                WHERE token_hash = \(bind: tokenHash) AND revoked_at IS NULL RETURNING token_hash
                """
            ).first() != nil
        }
    }
}
