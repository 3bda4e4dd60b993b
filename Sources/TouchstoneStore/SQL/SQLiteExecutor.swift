public import CoreMetrics
import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
public import SQLKit
import GRDB

/// The embedded SQLite engine, in WAL mode with `synchronous = FULL`, so that an acknowledged write survives a crash.
///
/// - Writes (and anything that may write) go through one connection and a ``GroupCommitQueue``: SQLite has a single
///   writer, so one serialised connection loses nothing to a pool and never hits `SQLITE_BUSY` inside the process;
///   operations that arrive while a commit is being written share the next transaction, so the disk's sync rate
///   bounds transactions, not operations.
/// - Reads the store declares read-only run on separate read connections (a file database only), in parallel with
///   the writer and with each other: WAL readers see the last committed state and never block the writer. Every write
///   is answered only after its commit, so a read that starts after an answered write sees it. A read connection serves
///   one operation at a time: statements overlapping on one connection share its read transaction, and a later one
///   would see the older snapshot of an earlier one.
/// - SQLite calls block their thread (a commit waits for `fsync`), so the connections run on a thread pool of their
///   own, one thread per connection, never on the process-wide pool that other work shares.
public final class SQLiteExecutor: SQLExecutor {
    /// Where the database lives.
    public enum Location: Sendable, Hashable {
        case memory
        case file(path: String)
    }

    /// Operations that may share one commit, by default.
    public static let defaultCommitBatch = GroupCommitQueue.defaultMaximumBatch
    /// Read connections beside the writer, by default (a file database).
    public static let defaultReadConnections = 2
    /// New WAL pages after which the log is copied back into the database (SQLite's default is 1,000), by the
    /// ``WALCheckpointer``, beside the writer. A page that many commits change (an index's last leaf, an interior page,
    /// a busy account's row) is copied back once per checkpoint, so checkpointing a tenth as often writes far fewer
    /// pages; the log grows to about 40 MB (4 KiB pages) before it is reused, at most to four times that when readers
    /// hold it (then the writer checkpoints itself). Measured: 3–5 % less server CPU per sign-in (docs/performance.md,
    /// item 12).
    public static let walCheckpointPages = 10_000

    private let writer: DatabaseQueue
    private let readers: [DatabaseQueue]
    /// Copies the log back into the database (a file database).
    let checkpointer: WALCheckpointer?
    private let writerDatabase: GRDBSQLDatabase
    private let readerDatabases: [GRDBSQLDatabase]
    /// The thread `COMMIT` (the `fsync`) runs on.
    private let commitThreads: NIOThreadPool
    private let readerLease: Lease
    private let queue: GroupCommitQueue
    private let mutex = AsyncMutex()
    private let logger: Logger
    private let closed = NIOLockedValueBox(false)

    private init(
        writer: DatabaseQueue,
        readers: [DatabaseQueue],
        checkpointer: WALCheckpointer?,
        commitThreads: NIOThreadPool,
        commitBatch: Int,
        metrics: (any MetricsFactory)?,
        logger: Logger
    ) {
        self.writer = writer
        self.readers = readers
        self.checkpointer = checkpointer
        self.commitThreads = commitThreads
        self.writerDatabase = GRDBSQLDatabase(connection: writer, commitThreads: commitThreads, logger: logger)
        self.readerDatabases = readers.map { GRDBSQLDatabase(connection: $0, commitThreads: nil, logger: logger) }
        self.readerLease = Lease(count: readers.count)
        self.queue = GroupCommitQueue(database: self.writerDatabase, maximumBatch: commitBatch, metrics: metrics)
        self.logger = logger
    }

    /// Opens (creating if needed) the database and applies the durability settings.
    ///
    /// - Parameters:
    ///   - commitBatch: At most this many operations share one commit (1: a commit per operation).
    ///   - readConnections: Connections for read-only operations (a file database; 0 sends reads to the writer).
    ///   - metrics: Where group-commit batch sizes and commit durations are reported (none when nil).
    public static func open(
        _ location: Location,
        commitBatch: Int = defaultCommitBatch,
        readConnections: Int = defaultReadConnections,
        walCheckpointPages: Int = walCheckpointPages,
        metrics: (any MetricsFactory)? = nil,
        logger: Logger
    ) async throws -> SQLiteExecutor {
        guard (1...1024).contains(commitBatch) else { throw StoreError.unavailable("commit batch must be 1...1024") }
        guard (0...64).contains(readConnections) else { throw StoreError.unavailable("read connections must be 0...64") }
        let readerCount = location == .memory ? 0 : readConnections
        let commitThreads = NIOThreadPool(numberOfThreads: 1)
        commitThreads.start()
        var checkpointer: WALCheckpointer?
        do {
            // The writer: WAL (a file), every commit synced, foreign keys on, and another process holding the write
            // lock waited for with back-off for up to 10 s instead of spinning on a core.
            let writer = try Self.connect(location, readOnly: false)
            try writer.inDatabase { db in
                if case .file = location { try db.execute(sql: "PRAGMA journal_mode = WAL") }
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            if case .file = location {
                // A connection of its own, in WAL mode from the start (a connection that has not read the database yet
                // has no log open, and its checkpoint would copy nothing).
                let connection = try Self.connect(location, readOnly: false, label: "touchstone.sqlite.checkpointer")
                try connection.inDatabase { db in
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                    try db.execute(sql: "PRAGMA synchronous = FULL")
                }
                let made = WALCheckpointer(connection: connection, threshold: walCheckpointPages, metrics: metrics)
                checkpointer = made
                // Its hook replaces SQLite's automatic checkpoint in the writer's commits.
                try writer.inDatabase { db in made.install(on: db) }
            }
            // An in-memory database is private to its connection: its reads stay on the writer.
            var readers: [DatabaseQueue] = []
            for _ in 0..<readerCount {
                let reader = try Self.connect(location, readOnly: true)
                try reader.inDatabase { db in try db.execute(sql: "PRAGMA query_only = ON") }
                readers.append(reader)
            }
            return SQLiteExecutor(
                writer: writer,
                readers: readers,
                checkpointer: checkpointer,
                commitThreads: commitThreads,
                commitBatch: commitBatch,
                metrics: metrics,
                logger: logger
            )
        } catch {
            // Nothing opened survives (the writer, released, takes its hook with it).
            try? await checkpointer?.close()
            try? await commitThreads.shutdownGracefully()
            throw StoreError.unavailable("cannot open SQLite database: \(error)")
        }
    }

    private static func connect(_ location: Location, readOnly: Bool, label: String? = nil) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(10)
        // The group commit opens a transaction in one access and commits it in a later one.
        configuration.allowsUnsafeTransactions = true
        // Statements of every store method are few and fixed: keep them all compiled.
        configuration.publicStatementArguments = false
        configuration.label = label ?? (readOnly ? "touchstone.sqlite.reader" : "touchstone.sqlite.writer")
        // Temporary storage in memory. Above all the statement journal: each group-committed operation runs in a
        // savepoint, which journals the pages it changes; past 64 KiB SQLite spilled that journal into a temporary
        // file, two `pwrite` calls per page, as many as the WAL itself took (docs/performance.md). It holds at most the
        // pages one transaction changes.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
        switch location {
        case .memory: return try DatabaseQueue(configuration: configuration)
        case .file(let path): return try DatabaseQueue(path: path, configuration: configuration)
        }
    }

    public func withDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        // The queue answers only after running `body`, so it never outlives this call.
        try await withoutActuallyEscaping(body) { body in try await self.queue.run(atomic: false, body) }
    }

    public func withTransaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await withoutActuallyEscaping(body) { body in try await self.queue.run(atomic: true, body) }
    }

    public func withReadOnlyDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        guard !self.readers.isEmpty else { return try await self.withDatabase(body) }
        guard !self.closed.withLockedValue({ $0 }) else { throw StoreError.unavailable("the database is closed") }
        let index = await self.readerLease.acquire()
        do {
            let result = try await body(self.readerDatabases[index])
            self.readerLease.release(index)
            return result
        } catch {
            self.readerLease.release(index)
            throw error
        }
    }

    /// Operations and transactions so far: their ratio is the mean group-commit batch.
    public var commitStatistics: (operations: Int, transactions: Int) {
        let statistics = self.queue.statistics
        return (statistics.operations, statistics.transactions)
    }

    /// `BEGIN IMMEDIATE` already excludes other writers.
    public var migrationLock: SQLQueryString? { nil }

    public func isUniqueViolation(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY
    }

    public func shutdown() async throws {
        // Closing must happen even when the caller is being cancelled (a service group tearing down after an error):
        // an unclosed connection loses the WAL checkpoint, so the close runs in a task of its own.
        let connections = self.readers + [self.writer]
        let writer = self.writer
        let checkpointer = self.checkpointer
        let commitThreads = self.commitThreads
        let mutex = self.mutex
        let closed = self.closed
        let queue = self.queue
        try await Task {
            await queue.close()
            try await mutex.withLock {
                guard !closed.withLockedValue({ $0 }) else { return }
                closed.withLockedValue { $0 = true }
                // The checkpointer first (its running checkpoint finishes), unhooked from the writer before it goes.
                if let checkpointer {
                    try writer.inDatabase { db in checkpointer.uninstall(from: db) }
                    try await checkpointer.close()
                }
                // Readers next: the writer's close checkpoints the WAL, which needs no reader holding a snapshot.
                for connection in connections { try connection.close() }
                try await commitThreads.shutdownGracefully()
            }
        }.value
    }

    deinit {
        // A store dropped without shutdown() (an error path): GRDB closes the connections when they are released; the
        // commit thread is stopped here.
        if !self.closed.withLockedValue({ $0 }) {
            self.commitThreads.shutdownGracefully { _ in }
            // The writer's hook must not outlive the checkpointer it points to.
            if let checkpointer = self.checkpointer {
                try? self.writer.inDatabase { db in checkpointer.uninstall(from: db) }
                checkpointer.stop()
            }
        }
    }
}

/// Hands out `count` numbered resources, one holder each, first come first served.
final class Lease: Sendable {
    private struct State {
        var free: [Int]
        var waiters: [CheckedContinuation<Int, Never>] = []
    }

    private let state: NIOLockedValueBox<State>

    init(count: Int) {
        self.state = NIOLockedValueBox(State(free: Array((0..<count).reversed())))
    }

    func acquire() async -> Int {
        await withCheckedContinuation { continuation in
            let index = self.state.withLockedValue { state -> Int? in
                if let index = state.free.popLast() { return index }
                state.waiters.append(continuation)
                return nil
            }
            if let index { continuation.resume(returning: index) }
        }
    }

    func release(_ index: Int) {
        let waiter = self.state.withLockedValue { state -> CheckedContinuation<Int, Never>? in
            if state.waiters.isEmpty {
                state.free.append(index)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: index)
    }
}
