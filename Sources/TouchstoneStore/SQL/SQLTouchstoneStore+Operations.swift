public import Foundation
import SQLKit

/// What the admin console reads: the audit trail counted by time bucket, and a user's live sessions.
extension SQLTouchstoneStore {
    public func auditEventCounts(since: Date, bucket: TimeInterval, types: [String]) async throws -> [AuditEventCount] {
        guard !types.isEmpty else { return [] }
        let bucketMillis = max(1000, Int64(bucket * 1000))
        let typeList = SQLList(types.map { SQLBind($0) })
        return try await self.executor.withReadOnlyDatabase { db in
            // Integer division of BIGINT millisecond times: the same bucket boundaries on SQLite and PostgreSQL. Grouped
            // by the column's name: PostgreSQL takes `occurred_at / $1` and `occurred_at / $2` for two expressions, and
            // refused the query when the division was written twice.
            try await db.raw(
                """
                SELECT occurred_at / \(bind: bucketMillis) AS bucket, type, outcome, reason, COUNT(*) AS n
                FROM audit_events
                WHERE occurred_at >= \(bind: since.millis) AND type IN (\(typeList))
                GROUP BY bucket, type, outcome, reason
                ORDER BY bucket
                """
            ).all().map { row in
                AuditEventCount(
                    bucketStart: Date(timeIntervalSince1970: TimeInterval(try row.decode(column: "bucket", as: Int64.self) * bucketMillis) / 1000),
                    type: try row.decode(column: "type", as: String.self),
                    outcome: try row.decode(column: "outcome", as: String.self),
                    reason: try row.decode(column: "reason", as: String?.self),
                    count: try row.decode(column: "n", as: Int64.self)
                )
            }
        }
    }

    public func activeSessions(userId: String, at: Date) async throws -> [SessionRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT * FROM sessions
                WHERE user_id = \(bind: userId) AND revoked_at IS NULL
                    AND expires_at > \(bind: at.millis) AND idle_expires_at > \(bind: at.millis)
                ORDER BY created_at DESC LIMIT 200
                """
            ).all().map(SessionRecord.init(row:))
        }
    }

    public func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "UPDATE users SET require_device_bound_passkeys = \(bind: required ? Int64(1) : 0) WHERE id = \(bind: userId) RETURNING id"
            ).first() != nil
        }
    }
}
