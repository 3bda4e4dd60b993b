import Foundation
import Testing
import TouchstoneStore

/// The admin console's charts: audit events counted by time bucket, on every engine (the query once failed on
/// PostgreSQL, whose GROUP BY did not take a second `occurred_at / $2` for the selected `occurred_at / $1`).
struct AuditCountsStoreTests {
    @Test(arguments: StoreTests.engines)
    func eventsAreCountedByBucketTypeOutcomeAndReason(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            let t0 = StoreTests.t0  // 1,800,000,000 s: a whole number of hours
            let events: [(TimeInterval, String, String, String?)] = [
                (10, "password_login", "success", nil),
                (20, "password_login", "success", nil),
                (30, "password_login", "failure", "invalid_credentials"),
                (3_600 + 5, "password_login", "success", nil),
                (3_600 + 6, "biometric_login", "success", nil),
                (7_200 + 1, "user.created", "info", nil),
                (-10, "password_login", "success", nil),
            ]
            for (index, (offset, type, outcome, reason)) in events.enumerated() {
                try await store.insertAuditEvent(
                    AuditEventRecord(id: "e\(index)", occurredAt: t0.addingTimeInterval(offset), type: type, outcome: outcome, reason: reason))
            }
            let counts = try await store.auditEventCounts(since: t0, bucket: 3_600, types: ["password_login", "biometric_login"])
            let seen = Set(counts.map { "\(Int($0.bucketStart.timeIntervalSince(t0))) \($0.type) \($0.outcome) \($0.reason ?? "-") \($0.count)" })
            #expect(seen == [
                "0 password_login success - 2",
                "0 password_login failure invalid_credentials 1",
                "3600 password_login success - 1",
                "3600 biometric_login success - 1",
            ])
            #expect(counts.map(\.bucketStart) == counts.map(\.bucketStart).sorted())
            #expect(try await store.auditEventCounts(since: t0, bucket: 3_600, types: []).isEmpty)
        }
    }
}
