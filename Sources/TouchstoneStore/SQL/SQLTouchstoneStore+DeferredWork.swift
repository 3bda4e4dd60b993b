public import Foundation
import SQLKit

// Work promised before the answer (issue #44 item 1): recorded with the request, leased by a worker, deleted with what
// it did. A lease that runs out (a worker that died) lets another worker take the record.
extension SQLTouchstoneStore {
    public func insertDeferredWork(_ work: DeferredWorkRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO deferred_work (id, kind, subject, created_at, attempts)
                VALUES (\(bind: work.id), \(bind: work.kind), \(bind: work.subject), \(bind: work.createdAt.millis), 0)
                """
            ).run()
        }
    }

    public func claimDeferredWork(now: Date, leaseUntil: Date, token: String, kinds: [String], limit: Int) async throws -> [DeferredWorkRecord] {
        guard !kinds.isEmpty else { return [] }
        // The outer conditions repeat the inner ones: on PostgreSQL a row another worker leased meanwhile is re-checked
        // after its lock is released, and skipped.
        let rows = try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE deferred_work SET claim_token = \(bind: token), claimed_until = \(bind: leaseUntil.millis), attempts = attempts + 1
                WHERE (claimed_until IS NULL OR claimed_until <= \(bind: now.millis))
                    AND id IN (
                        SELECT id FROM deferred_work
                        WHERE (claimed_until IS NULL OR claimed_until <= \(bind: now.millis)) AND kind IN (\(binds: kinds))
                        ORDER BY created_at, id LIMIT \(bind: Int64(limit))
                    )
                RETURNING id, kind, subject, created_at, attempts
                """
            ).all()
        }
        return try rows.map { row in
            DeferredWorkRecord(
                id: try row.decode(column: "id", as: String.self),
                kind: try row.decode(column: "kind", as: String.self),
                subject: try row.decode(column: "subject", as: String.self),
                createdAt: try row.date("created_at"),
                attempts: Int(try row.decode(column: "attempts", as: Int64.self))
            )
        }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func finishDeferredWork(id: String, token: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM deferred_work WHERE id = \(bind: id) AND claim_token = \(bind: token) RETURNING id").first() != nil
        }
    }

    public func postponeDeferredWork(id: String, token: String, until: Date) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "UPDATE deferred_work SET claimed_until = \(bind: until.millis) WHERE id = \(bind: id) AND claim_token = \(bind: token)"
            ).run()
        }
    }

    public func deferredWorkBacklog() async throws -> (count: Int, oldest: Date?) {
        try await self.executor.withReadOnlyDatabase { db in
            let row = try await db.raw("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM deferred_work").first()
            return (Int(try row?.decode(column: "n", as: Int64.self) ?? 0), try row?.optionalDate("oldest"))
        }
    }
}
