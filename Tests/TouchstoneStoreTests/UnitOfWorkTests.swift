import Foundation
import Testing
import TouchstoneStore

/// `unitOfWork`: the aggregates' statements called inside it commit together, or none of them does (issue #30,
/// item 1), on every engine.
struct UnitOfWorkTests {
    struct Failure: Error {}

    static func event(_ id: String, user: String) -> AuditEventRecord {
        AuditEventRecord(
            id: id, occurredAt: StoreTests.t0, type: "user.created", outcome: "success", userId: user,
            registrationId: nil, passkeyId: nil, clientAddress: nil, userAgent: nil
        )
    }

    @Test(arguments: TestDatabase.available)
    func aUnitCommitsEverythingOrNothing(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            // Committed: the user, its session and its event, and reads inside the unit see its own writes.
            let seenInside = try await store.unitOfWork { tx in
                try await tx.insertUser(StoreTests.user("u1"))
                try await tx.insertSession(StoreTests.session("t1", user: "u1"))
                try await tx.insertAuditEvent(Self.event("e1", user: "u1"))
                return try await tx.user(id: "u1") != nil
            }
            #expect(seenInside)
            #expect(try await store.user(id: "u1") != nil)
            #expect(try await store.session(tokenHash: "t1") != nil)
            #expect(try await store.auditEvents(AuditEventQuery(limit: 10)).map(\.id) == ["e1"])

            // Rolled back when the body throws after writing.
            await #expect(throws: Failure.self) {
                try await store.unitOfWork { tx in
                    try await tx.insertUser(StoreTests.user("u2"))
                    try await tx.insertAuditEvent(Self.event("e2", user: "u2"))
                    throw Failure()
                }
            }
            #expect(try await store.user(id: "u2") == nil)
            #expect(try await store.auditEvents(AuditEventQuery(limit: 10)).map(\.id) == ["e1"])

            // A statement that fails (the email is taken) fails the unit with the store's error, and what the unit
            // wrote before it is gone too.
            await #expect(throws: StoreError.conflict("")) {
                try await store.unitOfWork { tx in
                    try await tx.insertAuditEvent(Self.event("e3", user: "u1"))
                    try await tx.insertUser(StoreTests.user("u3", email: "u1@example.com"))
                }
            }
            #expect(try await store.user(id: "u3") == nil)
            #expect(try await store.auditEvents(AuditEventQuery(limit: 10)).map(\.id) == ["e1"])

            // The store works on after a failed unit.
            try await store.unitOfWork { tx in try await tx.insertUser(StoreTests.user("u4")) }
            #expect(try await store.user(id: "u4") != nil)
            try await store.shutdown()
        }
    }
}
