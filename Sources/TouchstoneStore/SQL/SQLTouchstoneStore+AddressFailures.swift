public import Foundation
import SQLKit

// Failed credential checks per client address: one row an address, counted and blocked in single statements so that
// every instance on the database shares the count and the block.
extension SQLTouchstoneStore {
    public func recordFailedCredentialCheck(address: String, limit: Int64, window: TimeInterval, at: Date) async throws
        -> AddressFailures
    {
        let now = at.millis
        let cutoff = at.addingTimeInterval(-window).millis
        let blockEnd = at.addingTimeInterval(window).millis
        let firstBlock: Int64? = limit <= 1 ? blockEnd : nil
        return try await self.executor.withDatabase { db in
            guard let row = try await db.raw(
                """
                INSERT INTO address_failures (address, failures, window_started_at, last_failure_at, blocked_until)
                VALUES (\(bind: address), 1, \(bind: now), \(bind: now), \(bind: firstBlock))
                ON CONFLICT (address) DO UPDATE
                SET failures = CASE WHEN address_failures.window_started_at < \(bind: cutoff) THEN 1
                        ELSE address_failures.failures + 1 END,
                    window_started_at = CASE WHEN address_failures.window_started_at < \(bind: cutoff) THEN \(bind: now)
                        ELSE address_failures.window_started_at END,
                    last_failure_at = \(bind: now),
                    blocked_until = CASE
                        WHEN (CASE WHEN address_failures.window_started_at < \(bind: cutoff) THEN 1
                            ELSE address_failures.failures + 1 END) >= \(bind: limit) THEN \(bind: blockEnd)
                        ELSE address_failures.blocked_until END
                RETURNING address, failures, last_failure_at, blocked_until
                """
            ).first() else {
                throw StoreError.unavailable("address failure upsert returned no row")
            }
            return try AddressFailures(row: row)
        }
    }

    public func addressBlock(address: String, at: Date) async throws -> AddressFailures? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT address, failures, last_failure_at, blocked_until FROM address_failures
                WHERE address = \(bind: address) AND blocked_until > \(bind: at.millis)
                """
            ).first().map(AddressFailures.init(row:))
        }
    }

    public func blockedAddresses(at: Date, limit: Int) async throws -> [AddressFailures] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT address, failures, last_failure_at, blocked_until FROM address_failures
                WHERE blocked_until > \(bind: at.millis)
                ORDER BY blocked_until DESC, address LIMIT \(bind: limit)
                """
            ).all().map(AddressFailures.init(row:))
        }
    }

    public func clearAddressFailures(address: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            let rows = try await db.raw("DELETE FROM address_failures WHERE address = \(bind: address) RETURNING blocked_until").all()
            return try rows.contains { row in (try row.optionalDate("blocked_until")).map { $0 > at } ?? false }
        }
    }
}

extension AddressFailures {
    init(row: any SQLRow) throws {
        self.init(
            address: try row.decode(column: "address", as: String.self),
            failures: try row.decode(column: "failures", as: Int64.self),
            lastFailureAt: try row.date("last_failure_at"),
            blockedUntil: try row.optionalDate("blocked_until")
        )
    }
}
