import Foundation
import GRDB
import Logging
import SQLKit
import Testing
@testable import TouchstoneStore

/// The SQLite executor's group commit: shared transactions, each operation still atomic on its own.
@Suite struct GroupCommitTests {
    private struct Failure: Error {}

    private func open() async throws -> (SQLiteExecutor, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("group-commit-\(UUID().uuidString).sqlite").path
        let executor = try await SQLiteExecutor.open(.file(path: path), logger: Logger(label: "test"))
        try await executor.withTransaction { db in
            try await db.raw("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)").run()
        }
        return (executor, path)
    }

    private func count(_ executor: SQLiteExecutor) async throws -> Int {
        try await executor.withDatabase { db in
            try await db.raw("SELECT COUNT(*) AS n FROM items").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    /// Removes a test database and its WAL files; called in `defer`, so also when a test fails.
    private static func removeFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test func concurrentWritesShareCommitsAndAllPersist() async throws {
        let (executor, path) = try await self.open()
        defer { Self.removeFiles(path) }
        let before = executor.commitStatistics
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<300 {
                group.addTask {
                    try await executor.withDatabase { db in
                        try await db.raw("INSERT INTO items (id, label) VALUES (\(bind: index), \(bind: "item \(index)"))").run()
                    }
                }
            }
            try await group.waitForAll()
        }
        let after = executor.commitStatistics
        #expect(after.operations - before.operations == 300)
        // 300 operations queued at once cannot each have had a commit of their own.
        #expect(after.transactions - before.transactions < 300)
        try await executor.shutdown()

        // Everything acknowledged is on disk: a new connection sees it.
        let reopened = try await SQLiteExecutor.open(.file(path: path), logger: Logger(label: "test"))
        #expect(try await self.count(reopened) == 300)
        try await reopened.shutdown()
    }

    @Test func aFailingTransactionRollsBackAloneInsideABatch() async throws {
        let (executor, path) = try await self.open()
        defer { Self.removeFiles(path) }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<40 {
                group.addTask {
                    do {
                        try await executor.withTransaction { db in
                            try await db.raw("INSERT INTO items (id, label) VALUES (\(bind: index * 2), \(bind: "a\(index)"))").run()
                            try await db.raw("INSERT INTO items (id, label) VALUES (\(bind: index * 2 + 1), \(bind: "b\(index)"))").run()
                            if index % 4 == 0 { throw Failure() }
                        }
                        return (index, true)
                    } catch is Failure {
                        return (index, false)
                    }
                }
            }
            var outcomes: [Int: Bool] = [:]
            for try await (index, ok) in group { outcomes[index] = ok }
            return outcomes
        }
        #expect(outcomes.values.filter { !$0 }.count == 10)
        // Each failed transaction left neither of its two rows; each successful one left both.
        let ids = try await executor.withDatabase { db in
            try await db.raw("SELECT id FROM items ORDER BY id").all().map { try $0.decode(column: "id", as: Int.self) }
        }
        let expected: [Int] = (0..<40).filter { $0 % 4 != 0 }.flatMap { (value: Int) -> [Int] in [value * 2, value * 2 + 1] }
        #expect(ids == expected)
        try await executor.shutdown()
    }

    @Test func aConstraintViolationFailsOnlyItsOwnStatement() async throws {
        let (executor, path) = try await self.open()
        defer { Self.removeFiles(path) }
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<60 {
                group.addTask {
                    do {
                        // Every third label repeats an earlier one: UNIQUE fails for the later writer only.
                        let label = index % 3 == 2 ? "item \(index - 1)" : "item \(index)"
                        try await executor.withDatabase { db in
                            try await db.raw("INSERT INTO items (id, label) VALUES (\(bind: index), \(bind: label))").run()
                        }
                        return true
                    } catch {
                        #expect(executor.isUniqueViolation(error))
                        return false
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        let failed = results.filter { !$0 }.count
        #expect(failed == 20)
        #expect(try await self.count(executor) == 40)
        try await executor.shutdown()
    }

    @Test func shutdownAnswersEveryOperationAndKeepsWhatItAcknowledged() async throws {
        let (executor, path) = try await self.open()
        defer { Self.removeFiles(path) }
        // Writes race the shutdown: each is either acknowledged (and then on disk) or refused, never left hanging.
        let acknowledged = try await withThrowingTaskGroup(of: Int?.self) { group in
            for index in 0..<50 {
                group.addTask {
                    do {
                        try await executor.withDatabase { db in
                            try await db.raw("INSERT INTO items (id, label) VALUES (\(bind: index), \(bind: "x\(index)"))").run()
                        }
                        return index
                    } catch let error as StoreError {
                        #expect(error == .unavailable(""))
                        return nil
                    }
                }
            }
            group.addTask {
                try await executor.shutdown()
                return nil
            }
            return try await group.reduce(into: Set<Int>()) { if let index = $1 { $0.insert(index) } }
        }
        await #expect(throws: StoreError.self) {
            try await executor.withDatabase { db in try await db.raw("SELECT 1").run() }
        }
        let reopened = try await SQLiteExecutor.open(.file(path: path), logger: Logger(label: "test"))
        let stored = try await reopened.withDatabase { db in
            try await db.raw("SELECT id FROM items").all().map { try $0.decode(column: "id", as: Int.self) }
        }
        #expect(Set(stored) == acknowledged)
        try await reopened.shutdown()
    }

    @Test func aReadConnectionServesOneOperationAtATime() async throws {
        // One read connection. A long read holds it; a write commits meanwhile; a read issued after the commit must
        // see the row. Had it run on the busy connection beside the long statement, it would have shared that
        // statement's older snapshot and missed the row.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lease-\(UUID().uuidString).sqlite").path
        defer { Self.removeFiles(path) }
        let executor = try await SQLiteExecutor.open(.file(path: path), readConnections: 1, logger: Logger(label: "test"))
        try await executor.withTransaction { db in try await db.raw("CREATE TABLE items (id INTEGER PRIMARY KEY)").run() }
        let longRead = Task {
            try await executor.withReadOnlyDatabase { db in
                try await db.raw(
                    """
                    WITH RECURSIVE counter(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM counter WHERE i < 2000000)
                    SELECT COUNT(*) AS n FROM counter, (SELECT COUNT(*) FROM items)
                    """
                ).first()?.decode(column: "n", as: Int.self)
            }
        }
        try await Task.sleep(for: .milliseconds(100))  // lets the long read start (if it has not, the test only weakens)
        try await executor.withDatabase { db in try await db.raw("INSERT INTO items (id) VALUES (1)").run() }
        let seen = try await executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT COUNT(*) AS n FROM items").first()?.decode(column: "n", as: Int.self)
        }
        #expect(seen == 1)
        #expect(try await longRead.value == 2_000_000)
        try await executor.shutdown()
    }

    /// The settings every connection is opened with: durability (WAL, every commit synced), checkpoints a tenth as
    /// often as SQLite's default, and temporary storage (the savepoints' statement journal) in memory.
    /// The log is copied back beside the writer and starts over: it stays bounded under a steady stream of commits.
    @Test func theCheckpointerKeepsTheLogBounded() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString).sqlite").path
        defer { Self.removeFiles(path) }
        let executor = try await SQLiteExecutor.open(.file(path: path), walCheckpointPages: 40, logger: Logger(label: "test"))
        let checkpointer = try #require(executor.checkpointer)
        try await executor.withTransaction { db in
            try await db.raw("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)").run()
        }
        // About 2,000 pages of log in all, one commit at a time (each row's 1 KiB label spreads the index).
        for index in 0..<1_000 {
            try await executor.withDatabase { db in
                try await db.raw(
                    "INSERT INTO items (id, label) VALUES (\(bind: index), \(bind: String(repeating: "x", count: 1_000) + String(index)))"
                ).run()
            }
        }
        let statistics = checkpointer.statistics
        #expect(statistics.checkpoints >= 2)
        #expect(statistics.restarts >= 2)
        // Bounded: the 2,000 frames written never pile up. The checkpointer's thread normally keeps the log well below
        // the hard limit (160 frames); on a machine busy enough to starve that thread (a build beside the tests) the
        // writer checkpoints at the limit itself now and then, and the log passes it by a commit or two before it
        // starts over. Most restarts must come from the checkpointer's copies, finished by the writer: with that finish
        // broken, every restart is one at the limit.
        #expect(statistics.maximumFrames < 2 * checkpointer.hardLimit)
        #expect(statistics.writerCheckpointsAtLimit * 2 < statistics.restarts)
        #expect(try await self.count(executor) == 1_000)
        try await executor.shutdown()
        // Everything is in the database file once closed.
        let reopened = try await SQLiteExecutor.open(.file(path: path), logger: Logger(label: "test"))
        #expect(try await self.count(reopened) == 1_000)
        try await reopened.shutdown()
    }

    /// A reader holding an old snapshot keeps the log from being copied past it: the log grows to the hard limit, where
    /// the writer checkpoints in its commits; once the reader lets go, the log is copied and starts over.
    @Test func aHeldSnapshotMeetsTheHardLimitAndTheLogRecovers() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString).sqlite").path
        defer { Self.removeFiles(path) }
        let executor = try await SQLiteExecutor.open(.file(path: path), walCheckpointPages: 20, logger: Logger(label: "test"))
        let checkpointer = try #require(executor.checkpointer)
        try await executor.withTransaction { db in
            try await db.raw("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)").run()
        }
        func insert(_ range: Range<Int>) async throws {
            for index in range {
                try await executor.withDatabase { db in
                    try await db.raw(
                        "INSERT INTO items (id, label) VALUES (\(bind: index), \(bind: String(repeating: "x", count: 1_000) + String(index)))"
                    ).run()
                }
            }
        }
        try await insert(0..<10)
        // Another connection opens a read transaction and keeps it.
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        try reader.inDatabase { db in
            try db.execute(sql: "BEGIN")
            _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items")
        }
        try await insert(10..<200)
        let held = checkpointer.statistics
        #expect(held.maximumFrames >= checkpointer.hardLimit)
        #expect(held.writerCheckpointsAtLimit > 0)
        try reader.inDatabase { db in try db.execute(sql: "ROLLBACK") }
        try reader.close()
        try await insert(200..<400)
        let released = checkpointer.statistics
        #expect(released.restarts > held.restarts)
        #expect(try await self.count(executor) == 400)
        try await executor.shutdown()
    }

    @Test func connectionsHaveTheirSettings() async throws {
        let (executor, path) = try await self.open()
        defer { Self.removeFiles(path) }
        func pragma(_ name: String, readOnly: Bool) async throws -> String? {
            let body: @Sendable (any SQLDatabase) async throws -> String? = { db in
                guard let row = try await db.raw(SQLQueryString("PRAGMA \(unsafeRaw: name)")).first() else { return nil }
                if let number = try? row.decode(column: name, as: Int.self) { return String(number) }
                return try row.decode(column: name, as: String.self)
            }
            return readOnly ? try await executor.withReadOnlyDatabase(body) : try await executor.withDatabase(body)
        }
        #expect(try await pragma("journal_mode", readOnly: false) == "wal")
        #expect(try await pragma("synchronous", readOnly: false) == "2")
        // SQLite's automatic checkpoint is off on the writer: the checkpointer's WAL hook replaced it.
        #expect(try await pragma("wal_autocheckpoint", readOnly: false) == "0")
        #expect(SQLiteExecutor.walCheckpointPages == 10_000)
        #expect(try await pragma("temp_store", readOnly: false) == "2")
        #expect(try await pragma("temp_store", readOnly: true) == "2")
        try await executor.shutdown()
    }
}
