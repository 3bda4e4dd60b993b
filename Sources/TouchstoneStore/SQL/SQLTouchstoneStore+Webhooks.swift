public import Foundation
import SQLKit

// Webhook endpoints and their outbox (issue #32): messages are written with the audit events that carry them, then
// leased, attempted and finished by the dispatchers of every instance.
extension SQLTouchstoneStore {
    // MARK: Outbox

    /// The columns of a new message, in the order of ``outboxValues(_:)`` after the endpoint id.
    static let outboxColumns = """
        endpoint_id, event_id, event_type, payload, created_at, state, attempts, round_attempts, round_started_at, next_attempt_at
        """

    static func outboxValues(_ event: WebhookOutboxEvent) -> [any Encodable & Sendable] {
        [event.id, event.type, event.payload, event.createdAt.millis, WebhookMessageRecord.State.pending.rawValue, Int64(0), Int64(0),
            event.createdAt.millis, event.createdAt.millis]
    }

    /// The `SELECT` that makes one message of `event` for each enabled endpoint subscribed to its type, from
    /// `extraTables` (a `WITH` entry of one row or none, so that nothing is written when it has none).
    static func outboxSelect(_ event: WebhookOutboxEvent, joining extraTables: String = "") -> SQLQueryString {
        """
        SELECT e.id, \(binds: Self.outboxValues(event)) FROM webhook_endpoints e\(unsafeRaw: extraTables)
        WHERE e.enabled = 1 AND EXISTS (
            SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.event_type IN (\(bind: event.type), '*')
        )
        """
    }

    /// Writes `event`'s messages (one statement) in the caller's transaction.
    static func enqueue(_ event: WebhookOutboxEvent, into db: any SQLDatabase) async throws {
        try await db.raw("INSERT INTO webhook_messages (\(unsafeRaw: Self.outboxColumns)) \(Self.outboxSelect(event))").run()
    }

    // MARK: Endpoints

    public func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws {
        do {
            try await self.executor.withTransaction { db in
                try await db.raw(
                    """
                    INSERT INTO webhook_endpoints (id, url, description, events, enabled, sealed_secret, previous_sealed_secret,
                        previous_secret_expires_at, created_at, updated_at, disabled_reason, last_success_at, failing_since)
                    VALUES (\(bind: endpoint.id), \(bind: endpoint.url), \(bind: endpoint.description), \(bind: endpoint.events.joined(separator: ",")),
                        \(bind: Int64(endpoint.enabled ? 1 : 0)), \(bind: endpoint.sealedSecret.base64URL),
                        \(bind: endpoint.previousSealedSecret?.base64URL), \(bind: endpoint.previousSecretExpiresAt?.millis),
                        \(bind: endpoint.createdAt.millis), \(bind: endpoint.updatedAt.millis), \(bind: endpoint.disabledReason),
                        \(bind: endpoint.lastSuccessAt?.millis), \(bind: endpoint.failingSince?.millis))
                    """
                ).run()
                try await Self.subscribe(endpoint, in: db)
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("webhook endpoint id taken")
        }
    }

    static func subscribe(_ endpoint: WebhookEndpointRecord, in db: any SQLDatabase) async throws {
        for type in endpoint.events {
            try await db.raw("INSERT INTO webhook_subscriptions (event_type, endpoint_id) VALUES (\(bind: type), \(bind: endpoint.id))").run()
        }
    }

    public func webhookEndpoint(id: String) async throws -> WebhookEndpointRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM webhook_endpoints WHERE id = \(bind: id)").first().map(WebhookEndpointRecord.init(row:))
        }
    }

    public func webhookEndpoints() async throws -> [WebhookEndpointRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM webhook_endpoints ORDER BY created_at, id").all().map(WebhookEndpointRecord.init(row:))
        }
    }

    public func updateWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws -> Bool {
        try await self.executor.withTransaction { db in
            guard
                try await db.raw(
                    """
                    UPDATE webhook_endpoints SET url = \(bind: endpoint.url), description = \(bind: endpoint.description),
                        events = \(bind: endpoint.events.joined(separator: ",")), enabled = \(bind: Int64(endpoint.enabled ? 1 : 0)),
                        disabled_reason = \(bind: endpoint.disabledReason), updated_at = \(bind: endpoint.updatedAt.millis),
                        failing_since = CASE WHEN \(bind: Int64(endpoint.enabled ? 1 : 0)) = 1 AND enabled = 0 THEN NULL ELSE failing_since END
                    WHERE id = \(bind: endpoint.id) RETURNING id
                    """
                ).first() != nil
            else {
                return false
            }
            try await db.raw("DELETE FROM webhook_subscriptions WHERE endpoint_id = \(bind: endpoint.id)").run()
            try await Self.subscribe(endpoint, in: db)
            return true
        }
    }

    public func deleteWebhookEndpoint(id: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM webhook_endpoints WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    public func rotateWebhookSecret(id: String, sealedSecret: [UInt8], previousExpiresAt: Date, at: Date) async throws -> Bool {
        // Every assignment reads the row as it was: the current secret becomes the previous one.
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE webhook_endpoints SET previous_sealed_secret = sealed_secret, previous_secret_expires_at = \(bind: previousExpiresAt.millis),
                    sealed_secret = \(bind: sealedSecret.base64URL), updated_at = \(bind: at.millis)
                WHERE id = \(bind: id) RETURNING id
                """
            ).first() != nil
        }
    }

    public func enqueueWebhookTest(endpointId: String, event: WebhookOutboxEvent) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO webhook_messages (\(unsafeRaw: Self.outboxColumns))
                SELECT e.id, \(binds: Self.outboxValues(event)) FROM webhook_endpoints e WHERE e.id = \(bind: endpointId) AND e.enabled = 1
                RETURNING event_id
                """
            ).first() != nil
        }
    }

    // MARK: Dispatch

    public func dueWebhookEndpoints(now: Date, limit: Int) async throws -> [String] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT e.id FROM webhook_endpoints e
                WHERE e.enabled = 1 AND EXISTS (
                    SELECT 1 FROM webhook_messages m
                    WHERE m.endpoint_id = e.id AND m.state = 'pending' AND m.next_attempt_at <= \(bind: now.millis)
                        AND (m.claimed_until IS NULL OR m.claimed_until <= \(bind: now.millis))
                )
                ORDER BY e.id LIMIT \(bind: Int64(limit))
                """
            ).all().map { try $0.decode(column: "id", as: String.self) }
        }
    }

    public func claimWebhookMessages(endpointId: String, now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [WebhookMessageRecord] {
        // The outer conditions repeat the inner ones: on PostgreSQL a row another instance leased meanwhile is
        // re-checked after its lock is released, and skipped (one lease per message, whatever the race).
        let rows = try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE webhook_messages SET claim_token = \(bind: token), claimed_until = \(bind: leaseUntil.millis)
                WHERE endpoint_id = \(bind: endpointId) AND state = 'pending' AND next_attempt_at <= \(bind: now.millis)
                    AND (claimed_until IS NULL OR claimed_until <= \(bind: now.millis))
                    AND event_id IN (
                        SELECT m.event_id FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id
                        WHERE m.endpoint_id = \(bind: endpointId) AND e.enabled = 1 AND m.state = 'pending'
                            AND m.next_attempt_at <= \(bind: now.millis)
                            AND (m.claimed_until IS NULL OR m.claimed_until <= \(bind: now.millis))
                        ORDER BY m.created_at, m.event_id LIMIT \(bind: Int64(limit))
                    )
                RETURNING *
                """
            ).all()
        }
        return try rows.map(WebhookMessageRecord.init(row:)).sorted { ($0.createdAt, $0.eventId) < ($1.createdAt, $1.eventId) }
    }

    public func finishWebhookAttempt(_ attempt: WebhookAttemptRecord, token: String, outcome: WebhookAttemptOutcome) async throws -> Bool {
        let (state, nextAttemptAt, deliveredAt): (WebhookMessageRecord.State, Date?, Date?) =
            switch outcome {
            case .delivered: (.delivered, nil, attempt.attemptedAt)
            case .retry(let at): (.pending, at, nil)
            case .failed: (.failed, nil, nil)
            }
        return try await self.executor.withTransaction { db in
            guard
                try await db.raw(
                    """
                    UPDATE webhook_messages SET state = \(bind: state.rawValue), attempts = \(bind: Int64(attempt.number)),
                        round_attempts = round_attempts + 1, next_attempt_at = \(bind: nextAttemptAt?.millis),
                        delivered_at = COALESCE(\(bind: deliveredAt?.millis), delivered_at),
                        last_status = \(bind: attempt.statusCode.map(Int64.init)), last_error = \(bind: attempt.error),
                        claim_token = NULL, claimed_until = NULL
                    WHERE endpoint_id = \(bind: attempt.endpointId) AND event_id = \(bind: attempt.eventId) AND claim_token = \(bind: token)
                    RETURNING event_id
                    """
                ).first() != nil
            else {
                return false
            }
            try await db.raw(
                """
                INSERT INTO webhook_attempts (endpoint_id, event_id, number, attempted_at, status_code, latency_ms, error)
                VALUES (\(bind: attempt.endpointId), \(bind: attempt.eventId), \(bind: Int64(attempt.number)), \(bind: attempt.attemptedAt.millis),
                    \(bind: attempt.statusCode.map(Int64.init)), \(bind: attempt.latencyMillis), \(bind: attempt.error))
                """
            ).run()
            if case .delivered = outcome {
                try await db.raw(
                    """
                    UPDATE webhook_endpoints SET last_success_at = \(bind: attempt.attemptedAt.millis), failing_since = NULL
                    WHERE id = \(bind: attempt.endpointId)
                    """
                ).run()
            } else {
                try await db.raw(
                    """
                    UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, \(bind: attempt.attemptedAt.millis))
                    WHERE id = \(bind: attempt.endpointId)
                    """
                ).run()
            }
            return true
        }
    }

    public func disableFailingWebhookEndpoint(id: String, since: Date, reason: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE webhook_endpoints SET enabled = 0, disabled_reason = \(bind: reason), updated_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND enabled = 1 AND (last_success_at IS NULL OR last_success_at < \(bind: since.millis))
                RETURNING id
                """
            ).first() != nil
        }
    }

    public func webhookDeliveries(endpointId: String, limit: Int) async throws -> [(WebhookMessageRecord, [WebhookAttemptRecord])] {
        try await self.executor.withReadOnlyDatabase { db in
            let messages = try await db.raw(
                """
                SELECT * FROM webhook_messages WHERE endpoint_id = \(bind: endpointId)
                ORDER BY created_at DESC, event_id DESC LIMIT \(bind: Int64(limit))
                """
            ).all().map(WebhookMessageRecord.init(row:))
            guard !messages.isEmpty else { return [] }
            let attempts = try await db.raw(
                """
                SELECT * FROM webhook_attempts WHERE endpoint_id = \(bind: endpointId) AND event_id IN (\(binds: messages.map(\.eventId)))
                ORDER BY number
                """
            ).all().map(WebhookAttemptRecord.init(row:))
            let byEvent = Dictionary(grouping: attempts, by: \.eventId)
            return messages.map { ($0, byEvent[$0.eventId] ?? []) }
        }
    }

    public func retryWebhookMessage(endpointId: String, eventId: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE webhook_messages SET state = 'pending', round_attempts = 0, round_started_at = \(bind: at.millis),
                    next_attempt_at = \(bind: at.millis)
                WHERE endpoint_id = \(bind: endpointId) AND event_id = \(bind: eventId) RETURNING event_id
                """
            ).first() != nil
        }
    }

    public func webhookSubscribedTypes() async throws -> Set<String> {
        try await self.executor.withReadOnlyDatabase { db in
            Set(
                try await db.raw(
                    """
                    SELECT DISTINCT s.event_type FROM webhook_subscriptions s
                    JOIN webhook_endpoints e ON e.id = s.endpoint_id WHERE e.enabled = 1
                    """
                ).all().map { try $0.decode(column: "event_type", as: String.self) }
            )
        }
    }

    public func webhookQueueStatistics() async throws -> WebhookQueueStatistics {
        try await self.executor.withReadOnlyDatabase { db in
            let row = try await db.raw(
                "SELECT COUNT(*) AS pending, MIN(created_at) AS oldest FROM webhook_messages WHERE state = 'pending'"
            ).first()
            return WebhookQueueStatistics(
                pending: Int(try row?.decode(column: "pending", as: Int64.self) ?? 0),
                oldestPendingAt: try row?.decode(column: "oldest", as: Int64?.self).map(Date.init(millis:))
            )
        }
    }

    public func purgeWebhookMessages(before cutoff: Date) async throws -> Int {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "DELETE FROM webhook_messages WHERE state <> 'pending' AND created_at < \(bind: cutoff.millis) RETURNING event_id"
            ).all().count
        }
    }
}

extension WebhookEndpointRecord {
    init(row: any SQLRow) throws {
        func sealed(_ column: String) throws -> [UInt8]? {
            guard let text = try row.decode(column: column, as: String?.self) else { return nil }
            guard let bytes = [UInt8](base64URL: text) else { throw StoreError.unavailable("stored webhook secret is not base64url") }
            return bytes
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            url: try row.decode(column: "url", as: String.self),
            description: try row.decode(column: "description", as: String.self),
            events: try row.decode(column: "events", as: String.self).split(separator: ",").map(String.init),
            enabled: try row.decode(column: "enabled", as: Int64.self) != 0,
            sealedSecret: try sealed("sealed_secret") ?? [],
            createdAt: try row.date("created_at")
        )
        self.previousSealedSecret = try sealed("previous_sealed_secret")
        self.previousSecretExpiresAt = try row.optionalDate("previous_secret_expires_at")
        self.updatedAt = try row.date("updated_at")
        self.disabledReason = try row.decode(column: "disabled_reason", as: String?.self)
        self.lastSuccessAt = try row.optionalDate("last_success_at")
        self.failingSince = try row.optionalDate("failing_since")
    }
}

extension WebhookMessageRecord {
    init(row: any SQLRow) throws {
        self.init(
            endpointId: try row.decode(column: "endpoint_id", as: String.self),
            eventId: try row.decode(column: "event_id", as: String.self),
            eventType: try row.decode(column: "event_type", as: String.self),
            payload: try row.decode(column: "payload", as: String.self),
            createdAt: try row.date("created_at"),
            state: try row.enumValue("state", as: State.self),
            attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
            roundAttempts: Int(try row.decode(column: "round_attempts", as: Int64.self)),
            roundStartedAt: try row.date("round_started_at"),
            nextAttemptAt: try row.optionalDate("next_attempt_at"),
            deliveredAt: try row.optionalDate("delivered_at"),
            lastStatus: try row.decode(column: "last_status", as: Int64?.self).map(Int.init),
            lastError: try row.decode(column: "last_error", as: String?.self)
        )
    }
}

extension WebhookAttemptRecord {
    init(row: any SQLRow) throws {
        self.init(
            endpointId: try row.decode(column: "endpoint_id", as: String.self),
            eventId: try row.decode(column: "event_id", as: String.self),
            number: Int(try row.decode(column: "number", as: Int64.self)),
            attemptedAt: try row.date("attempted_at"),
            statusCode: try row.decode(column: "status_code", as: Int64?.self).map(Int.init),
            latencyMillis: try row.decode(column: "latency_ms", as: Int64.self),
            error: try row.decode(column: "error", as: String?.self)
        )
    }
}
