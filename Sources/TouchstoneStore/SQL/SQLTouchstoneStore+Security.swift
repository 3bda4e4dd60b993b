public import Foundation
import SQLKit

// App PINs, the audit trail, abuse protection and administration: the same portable SQL as the rest of the store.
extension SQLTouchstoneStore {
    // MARK: App PINs

    public func setPin(registrationId: String, userId: String, pinHash: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET pin_hash = \(bind: pinHash), pin_set_at = \(bind: at.millis),
                    pin_failed_attempts = 0, pin_disabled_at = NULL
                WHERE id = \(bind: registrationId) AND user_id = \(bind: userId) AND status = 'active'
                RETURNING id
                """
            ).first() != nil
        }
    }

    public func removePin(registrationId: String, userId: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET pin_hash = NULL, pin_set_at = NULL, pin_failed_attempts = 0, pin_disabled_at = NULL
                WHERE id = \(bind: registrationId) AND user_id = \(bind: userId) AND pin_hash IS NOT NULL
                RETURNING id
                """
            ).first() != nil
        }
    }

    public func beginPinAttempt(registrationId: String, maxAttempts: Int64) async throws -> PinAttempt {
        try await self.executor.withTransaction { db in
            // Reserve the attempt first: the count can never pass maxAttempts, so at most that many PINs are checked.
            if let row = try await db.raw(
                """
                UPDATE registrations SET pin_failed_attempts = pin_failed_attempts + 1
                WHERE id = \(bind: registrationId) AND status = 'active' AND pin_hash IS NOT NULL
                    AND pin_disabled_at IS NULL AND pin_failed_attempts < \(bind: maxAttempts)
                RETURNING pin_hash, user_id
                """
            ).first() {
                return .verify(
                    hash: try row.decode(column: "pin_hash", as: String.self),
                    userId: try row.decode(column: "user_id", as: String.self)
                )
            }
            guard let row = try await db.raw(
                "SELECT pin_hash FROM registrations WHERE id = \(bind: registrationId) AND status = 'active'"
            ).first() else {
                return .noRegistration
            }
            return try row.decode(column: "pin_hash", as: String?.self) == nil ? .noPin : .disabled
        }
    }

    public func recordWrongPin(registrationId: String, maxAttempts: Int64, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET pin_disabled_at = \(bind: at.millis)
                WHERE id = \(bind: registrationId) AND pin_hash IS NOT NULL AND pin_disabled_at IS NULL
                    AND pin_failed_attempts >= \(bind: maxAttempts)
                RETURNING id
                """
            ).first() != nil
        }
    }

    public func completePinSignIn(registrationId: String, session: SessionRecord, events: [AuditEventRecord], at: Date)
        async throws -> Bool
    {
        try await self.executor.withTransaction { db in
            guard try await db.raw(
                """
                UPDATE registrations SET pin_failed_attempts = 0, last_used_at = \(bind: at.millis)
                WHERE id = \(bind: registrationId) AND status = 'active' AND pin_hash IS NOT NULL AND pin_disabled_at IS NULL
                RETURNING id
                """
            ).first() != nil else {
                return false
            }
            try await Self.insert(session, into: db)
            for event in events { try await Self.insert(event, into: db) }
            return true
        }
    }

    public func reenablePins(userId: String) async throws -> [String] {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET pin_failed_attempts = 0, pin_disabled_at = NULL
                WHERE user_id = \(bind: userId) AND pin_hash IS NOT NULL
                    AND (pin_disabled_at IS NOT NULL OR pin_failed_attempts > 0)
                RETURNING id
                """
            ).all().map { try $0.decode(column: "id", as: String.self) }
        }
    }

    // MARK: Audit trail

    public func insertAuditEvent(_ event: AuditEventRecord) async throws {
        if event.webhooks.isEmpty && event.mails.isEmpty {
            try await self.executor.withDatabase { db in try await Self.insert(event, into: db) }
        } else {
            // The event, its webhook messages and mails commit together (inside a unit of work, with the change itself).
            try await self.executor.withTransaction { db in try await Self.insert(event, into: db) }
        }
    }

    public func deleteAuditEvents(before cutoff: Date) async throws -> Int {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM audit_events WHERE occurred_at < \(bind: cutoff.millis) RETURNING id").all().count
        }
    }

    /// Inserts `event`, its webhook messages and its mails; the caller makes it one transaction when there are any.
    static func insert(_ event: AuditEventRecord, into db: any SQLDatabase) async throws {
        try await db.raw("INSERT INTO audit_events (\(unsafeRaw: AuditEventRecord.insertColumns)) VALUES (\(binds: event.insertValues))").run()
        for webhook in event.webhooks { try await Self.enqueue(webhook, into: db) }
        for mail in event.mails { try await Self.enqueue(mail, into: db) }
    }

    public func auditEvents(_ query: AuditEventQuery) async throws -> [AuditEventRecord] {
        var conditions: [any SQLExpression] = []
        if let userId = query.userId { conditions.append(SQLQueryString("user_id = \(bind: userId)")) }
        if let type = query.type { conditions.append(SQLQueryString("type = \(bind: type)")) }
        if let since = query.since { conditions.append(SQLQueryString("occurred_at >= \(bind: since.millis)")) }
        if let until = query.until { conditions.append(SQLQueryString("occurred_at < \(bind: until.millis)")) }
        if let after = query.after {
            let comparison = query.ascending ? ">" : "<"
            conditions.append(
                SQLQueryString(
                    """
                    (occurred_at \(unsafeRaw: comparison) \(bind: after.occurredAt.millis)
                        OR (occurred_at = \(bind: after.occurredAt.millis) AND id \(unsafeRaw: comparison) \(bind: after.id)))
                    """
                )
            )
        }
        let filter: any SQLExpression = conditions.isEmpty
            ? SQLRaw("1 = 1") : SQLList(conditions, separator: SQLRaw(" AND "))
        let direction = query.ascending ? "ASC" : "DESC"
        let limit = max(1, min(query.limit, 10_000))
        return try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT * FROM audit_events WHERE \(filter)
                ORDER BY occurred_at \(unsafeRaw: direction), id \(unsafeRaw: direction) LIMIT \(bind: limit)
                """
            ).all().map(AuditEventRecord.init(row:))
        }
    }

    // MARK: Abuse protection

    public func takeRateLimitToken(key: String, capacity: Int64, interval: TimeInterval, at: Date) async throws
        -> TimeInterval?
    {
        // GCRA: the bucket is one time, "tat"; a request is allowed when, after it, tat is at most capacity intervals
        // ahead of now. Equivalent to a token bucket of `capacity` refilled one token per interval; one statement, so
        // concurrent requests on any instance each take their own token.
        let now = at.millis
        let step = max(1, Int64((interval * 1000).rounded()))
        let burst = capacity * step
        return try await self.executor.withDatabase { db in
            let taken = try await db.raw(
                """
                INSERT INTO rate_limits (bucket, tat) VALUES (\(bind: key), \(bind: now + step))
                ON CONFLICT (bucket) DO UPDATE
                SET tat = (CASE WHEN rate_limits.tat > \(bind: now) THEN rate_limits.tat ELSE \(bind: now) END) + \(bind: step)
                WHERE (CASE WHEN rate_limits.tat > \(bind: now) THEN rate_limits.tat ELSE \(bind: now) END)
                    + \(bind: step) - \(bind: now) <= \(bind: burst)
                RETURNING tat
                """
            ).first() != nil
            guard !taken else { return nil }
            let tat = try await db.raw("SELECT tat FROM rate_limits WHERE bucket = \(bind: key)").first()?
                .decode(column: "tat", as: Int64.self) ?? now
            let waitMillis = max(1, tat + step - now - burst)
            return TimeInterval(waitMillis) / 1000
        }
    }

    public func recordLoginFailure(key: String, window: TimeInterval, at: Date) async throws -> LoginFailures {
        let cutoff = at.addingTimeInterval(-window).millis
        return try await self.executor.withDatabase { db in
            guard let row = try await db.raw(
                """
                INSERT INTO login_failures (bucket, failures, last_failure_at) VALUES (\(bind: key), 1, \(bind: at.millis))
                ON CONFLICT (bucket) DO UPDATE
                SET failures = CASE WHEN login_failures.last_failure_at < \(bind: cutoff) THEN 1
                        ELSE login_failures.failures + 1 END,
                    last_failure_at = \(bind: at.millis)
                RETURNING failures, last_failure_at
                """
            ).first() else {
                throw StoreError.unavailable("login failure upsert returned no row")
            }
            return LoginFailures(failures: try row.decode(column: "failures", as: Int64.self), lastFailureAt: try row.date("last_failure_at"))
        }
    }

    public func loginFailures(key: String) async throws -> LoginFailures? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT failures, last_failure_at FROM login_failures WHERE bucket = \(bind: key)").first().map {
                LoginFailures(failures: try $0.decode(column: "failures", as: Int64.self), lastFailureAt: try $0.date("last_failure_at"))
            }
        }
    }

    public func clearLoginFailures(key: String) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM login_failures WHERE bucket = \(bind: key)").run()
        }
    }

    // MARK: Administration

    public func insertAdminKey(_ key: AdminKeyRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO admin_keys (id, name, key_hash, created_at, revoked_at)
                VALUES (\(bind: key.id), \(bind: key.name), \(bind: key.keyHash), \(bind: key.createdAt.millis),
                    \(bind: key.revokedAt?.millis))
                """
            ).run()
        }
    }

    public func adminKey(keyHash: String) async throws -> AdminKeyRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM admin_keys WHERE key_hash = \(bind: keyHash) AND revoked_at IS NULL").first()
                .map(AdminKeyRecord.init(row:))
        }
    }

    public func adminKeys() async throws -> [AdminKeyRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM admin_keys ORDER BY created_at, id").all().map(AdminKeyRecord.init(row:))
        }
    }

    public func revokeAdminKey(id: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "UPDATE admin_keys SET revoked_at = \(bind: at.millis) WHERE id = \(bind: id) AND revoked_at IS NULL RETURNING id"
            ).first() != nil
        }
    }

    public func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord] {
        var conditions: [any SQLExpression] = []
        if let fragment = emailContaining {
            // LIKE with the fragment's own wildcards escaped: a search for "a_b" finds "a_b" only.
            let escaped = fragment.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            conditions.append(SQLQueryString("email LIKE \(bind: "%" + escaped + "%") ESCAPE '\\'"))
        }
        if let afterId {
            conditions.append(
                SQLQueryString(
                    """
                    (created_at < (SELECT created_at FROM users WHERE id = \(bind: afterId))
                        OR (created_at = (SELECT created_at FROM users WHERE id = \(bind: afterId)) AND id < \(bind: afterId)))
                    """
                )
            )
        }
        let filter: any SQLExpression = conditions.isEmpty
            ? SQLRaw("1 = 1") : SQLList(conditions, separator: SQLRaw(" AND "))
        return try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM users WHERE \(filter) ORDER BY created_at DESC, id DESC LIMIT \(bind: max(1, min(limit, 1000)))"
            ).all().map(UserRecord.init(row:))
        }
    }

    public func revokeSessions(userId: String, keeping: String?, at: Date) async throws -> Int {
        try await self.executor.withTransaction { db in
            let rows = try await db.raw(
                """
                UPDATE sessions SET revoked_at = \(bind: at.millis)
                WHERE user_id = \(bind: userId) AND revoked_at IS NULL AND expires_at > \(bind: at.millis)
                    AND token_hash <> \(bind: keeping ?? "")
                RETURNING id
                """
            ).all()
            try await Self.endTokenFamilies(sessionIds: try rows.compactMap { try $0.decode(column: "id", as: String?.self) }, at: at, in: db)
            return rows.count
        }
    }

    public func updatePassword(userId: String, passwordHash: String?) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "UPDATE users SET password_hash = \(bind: passwordHash ?? "") WHERE id = \(bind: userId) RETURNING id"
            ).first() != nil
        }
    }

    public func setting(name: String) async throws -> String? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT value FROM settings WHERE name = \(bind: name)").first()?
                .decode(column: "value", as: String.self)
        }
    }

    public func saveSetting(name: String, value: String, at: Date) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO settings (name, value, updated_at) VALUES (\(bind: name), \(bind: value), \(bind: at.millis))
                ON CONFLICT (name) DO UPDATE SET value = \(bind: value), updated_at = \(bind: at.millis)
                """
            ).run()
        }
    }
}

extension SQLTouchstoneStore {
    public func insertSetting(name: String, value: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO settings (name, value, updated_at) VALUES (\(bind: name), \(bind: value), \(bind: at.millis))
                ON CONFLICT (name) DO NOTHING RETURNING name
                """
            ).first() != nil
        }
    }
}

extension AuditEventRecord {
    /// The columns an insert names, in the order of ``insertValues``.
    static let insertColumns = "id, occurred_at, type, outcome, user_id, registration_id, passkey_id, client_address, user_agent, reason"

    var insertValues: [any Encodable & Sendable] {
        [
            self.id, self.occurredAt.millis, self.type, self.outcome, self.userId, self.registrationId, self.passkeyId,
            self.clientAddress, self.userAgent, self.reason,
        ]
    }
}

extension AuditEventRecord {
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            occurredAt: try row.date("occurred_at"),
            type: try row.decode(column: "type", as: String.self),
            outcome: try row.decode(column: "outcome", as: String.self),
            userId: try row.decode(column: "user_id", as: String?.self),
            registrationId: try row.decode(column: "registration_id", as: String?.self),
            passkeyId: try row.decode(column: "passkey_id", as: String?.self),
            clientAddress: try row.decode(column: "client_address", as: String?.self),
            userAgent: try row.decode(column: "user_agent", as: String?.self),
            reason: try row.decode(column: "reason", as: String?.self)
        )
    }
}

extension AdminKeyRecord {
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            keyHash: try row.decode(column: "key_hash", as: String.self),
            createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at")
        )
    }
}
