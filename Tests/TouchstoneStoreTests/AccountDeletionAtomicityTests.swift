import Foundation
import SQLKit
import Testing
import TouchstoneStore

/// An account's deletion is one transaction (issue #42): a database that fails in its middle leaves the account whole,
/// its sessions live, on every engine. The failure is a trigger that refuses the final `DELETE FROM users` after the
/// sessions were already ended in the same transaction.
struct AccountDeletionAtomicityTests {
    @Test(arguments: TestDatabase.available.filter(\.isPersistent))
    func aDeletionCutInTheMiddleLeavesTheAccountWhole(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            try await store.insertUser(StoreTests.user("staying"))
            try await store.insertSession(StoreTests.session("live", user: "staying"))
            let raw = try await fixture.openExecutor()
            try await raw.withDatabase { db in
                if database.isPostgres {
                    try await db.raw("CREATE FUNCTION cut_deletion() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'cut'; END $$ LANGUAGE plpgsql").run()
                    try await db.raw("CREATE TRIGGER cut BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION cut_deletion()").run()
                } else {
                    try await db.raw("CREATE TRIGGER cut BEFORE DELETE ON users BEGIN SELECT RAISE(ABORT, 'cut'); END").run()
                }
            }
            await #expect(throws: (any Error).self) { try await store.deleteUser(id: "staying", at: StoreTests.t0) }
            #expect(try await store.user(id: "staying") != nil)
            let session = try #require(try await store.session(tokenHash: "live"))
            #expect(session.revokedAt == nil, "the sessions' end was rolled back with the rest")
            // Once the database works again, the deletion goes through whole.
            try await raw.withDatabase { db in try await db.raw("DROP TRIGGER cut\(unsafeRaw: database.isPostgres ? " ON users" : "")").run() }
            #expect(try await store.deleteUser(id: "staying", at: StoreTests.t0))
            #expect(try await store.user(id: "staying") == nil)
            try await raw.shutdown()
            try await store.shutdown()
        }
    }
}
