import Foundation
import Logging
import SQLKit
import Testing
import TouchstoneStore

/// A database engine the store tests run on, and a fresh, isolated database on it for one test.
enum TestDatabase: Sendable, CustomTestStringConvertible {
    case sqliteMemory
    case sqliteFile
    case postgres(url: String)

    /// SQLite always; PostgreSQL when `TOUCHSTONE_TEST_POSTGRES_URL` is set (a visible line says when it is not).
    static let available: [TestDatabase] = {
        var engines: [TestDatabase] = [.sqliteMemory, .sqliteFile]
        if let url = ProcessInfo.processInfo.environment["TOUCHSTONE_TEST_POSTGRES_URL"], !url.isEmpty {
            engines.append(.postgres(url: url))
        } else {
            print("⚠︎ TOUCHSTONE_TEST_POSTGRES_URL is not set: the store tests run on SQLite only, PostgreSQL is SKIPPED")
        }
        return engines
    }()

    /// Whether a second connection sees the same data (not so for SQLite in memory).
    var isPersistent: Bool {
        if case .sqliteMemory = self { return false }
        return true
    }

    var isPostgres: Bool {
        if case .postgres = self { return true }
        return false
    }

    var testDescription: String {
        switch self {
        case .sqliteMemory: "SQLite (memory)"
        case .sqliteFile: "SQLite (file)"
        case .postgres: "PostgreSQL"
        }
    }

    /// One test's database: a fresh SQLite file, or a fresh schema in the PostgreSQL database.
    struct Fixture: Sendable {
        let database: TestDatabase
        let path: String
        let schema: String

        func openExecutor() async throws -> any SQLExecutor {
            let logger = Logger(label: "test")
            switch self.database {
            case .sqliteMemory: return try await SQLiteExecutor.open(.memory, logger: logger)
            case .sqliteFile: return try await SQLiteExecutor.open(.file(path: self.path), logger: logger)
            case .postgres(let url):
                return try PostgresExecutor.open(.init(url: TestDatabase.url(url, schema: self.schema)), logger: logger)
            }
        }

        /// Opens a store on this test's database, migrated unless told otherwise.
        func open(migrate: Bool = true) async throws -> SQLTouchstoneStore {
            let store = SQLTouchstoneStore(executor: try await self.openExecutor())
            if migrate { try await store.migrate() }
            return store
        }
    }

    /// Runs `body` with a fresh database and removes it afterwards.
    func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let fixture = Fixture(
            database: self,
            path: FileManager.default.temporaryDirectory.appendingPathComponent("store-\(suffix).sqlite").path,
            schema: "test_\(suffix)"
        )
        if case .sqliteMemory = self {
            // Each in-memory connection is its own database; tests that reopen need the file variant.
            try await body(fixture)
            return
        }
        if case .postgres(let url) = self {
            try await Self.admin(url) { db in try await db.raw("CREATE SCHEMA \(unsafeRaw: fixture.schema)").run() }
        }
        do {
            try await body(fixture)
        } catch {
            try? await self.remove(fixture)
            throw error
        }
        try await self.remove(fixture)
    }

    private func remove(_ fixture: Fixture) async throws {
        switch self {
        case .sqliteMemory: break
        case .sqliteFile:
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: fixture.path + suffix) }
        case .postgres(let url):
            try await Self.admin(url) { db in try await db.raw("DROP SCHEMA \(unsafeRaw: fixture.schema) CASCADE").run() }
        }
    }

    private static func admin(_ url: String, _ body: @Sendable (any SQLDatabase) async throws -> Void) async throws {
        let executor = try PostgresExecutor.open(.init(url: url), logger: Logger(label: "test-admin"))
        do {
            try await executor.withDatabase(body)
        } catch {
            try await executor.shutdown()
            throw error
        }
        try await executor.shutdown()
    }

    static func url(_ url: String, schema: String) -> String {
        url + (url.contains("?") ? "&" : "?") + "schema=\(schema)"
    }
}
