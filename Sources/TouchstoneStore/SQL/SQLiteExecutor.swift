import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
public import SQLKit
import SQLiteKit
import SQLiteNIO

/// The embedded SQLite engine: one connection, in WAL mode with `synchronous = FULL`, so that an acknowledged write
/// survives a crash.
///
/// SQLite has a single writer, so one serialised connection loses nothing to a pool and can never hit `SQLITE_BUSY`
/// inside the process.
public final class SQLiteExecutor: SQLExecutor {
    /// Where the database lives.
    public enum Location: Sendable, Hashable {
        case memory
        case file(path: String)
    }

    private let connection: SQLiteConnection
    private let mutex = AsyncMutex()
    private let logger: Logger
    private let closed = NIOLockedValueBox(false)

    private init(connection: SQLiteConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Opens (creating if needed) the database and applies the durability settings.
    public static func open(_ location: Location, logger: Logger) async throws -> SQLiteExecutor {
        let storage: SQLiteConnection.Storage
        switch location {
        case .memory: storage = .memory
        case .file(let path): storage = .file(path: path)
        }
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        } catch {
            throw StoreError.unavailable("cannot open SQLite database: \(error)")
        }
        let executor = SQLiteExecutor(connection: connection, logger: logger)
        let db = connection.sql(queryLogLevel: .trace)
        if case .file = location {
            try await db.raw("PRAGMA journal_mode = WAL").run()
        }
        try await db.raw("PRAGMA synchronous = FULL").run()
        // Another process holding the write lock: wait with back-off for up to 10 s instead of spinning on a core.
        try await db.raw("PRAGMA busy_timeout = 10000").run()
        try await db.raw("PRAGMA foreign_keys = ON").run()
        return executor
    }

    public func withDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        let db = self.connection.sql(queryLogLevel: .trace)
        return try await self.mutex.withLock { try await body(db) }
    }

    public func withTransaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        let db = self.connection.sql(queryLogLevel: .trace)
        // BEGIN IMMEDIATE takes the write lock at once, so a transaction never fails half-way on an upgrade.
        return try await self.mutex.withLock { try await self.transaction(on: db, begin: "BEGIN IMMEDIATE", body) }
    }

    /// `BEGIN IMMEDIATE` already excludes other writers.
    public var migrationLock: SQLQueryString? { nil }

    public func isUniqueViolation(_ error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        // The reason is the primary or the extended result code depending on the build; the message is stable.
        return error.message.contains("UNIQUE constraint failed")
    }

    public func shutdown() async throws {
        // Closing must happen even when the caller is being cancelled (a service group tearing down after an error):
        // an unclosed connection loses the WAL checkpoint, so the close runs in a task of its own.
        let connection = self.connection
        let mutex = self.mutex
        let closed = self.closed
        try await Task {
            try await mutex.withLock {
                guard !closed.withLockedValue({ $0 }) else { return }
                try await connection.close()
                closed.withLockedValue { $0 = true }
            }
        }.value
    }

    deinit {
        // A store dropped without shutdown() (an error path) still closes its connection; the pending close keeps the
        // connection alive until it completes.
        if !self.closed.withLockedValue({ $0 }) {
            _ = self.connection.close() as EventLoopFuture<Void>
        }
    }
}
