public import CoreMetrics
import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
public import SQLKit
import SQLiteKit
import SQLiteNIO

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

    private let writer: SQLiteConnection
    private let readers: [SQLiteConnection]
    private let threadPool: NIOThreadPool
    private let readerLease: Lease
    private let queue: GroupCommitQueue
    private let mutex = AsyncMutex()
    private let logger: Logger
    private let closed = NIOLockedValueBox(false)

    private init(
        writer: SQLiteConnection,
        readers: [SQLiteConnection],
        threadPool: NIOThreadPool,
        commitBatch: Int,
        metrics: (any MetricsFactory)?,
        logger: Logger
    ) {
        self.writer = writer
        self.readers = readers
        self.readerLease = Lease(count: readers.count)
        self.threadPool = threadPool
        self.queue = GroupCommitQueue(database: writer.sql(queryLogLevel: .trace), maximumBatch: commitBatch, metrics: metrics)
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
        metrics: (any MetricsFactory)? = nil,
        logger: Logger
    ) async throws -> SQLiteExecutor {
        guard (1...1024).contains(commitBatch) else { throw StoreError.unavailable("commit batch must be 1...1024") }
        guard (0...64).contains(readConnections) else { throw StoreError.unavailable("read connections must be 0...64") }
        let storage: SQLiteConnection.Storage
        switch location {
        case .memory: storage = .memory
        case .file(let path): storage = .file(path: path)
        }
        let readerCount = location == .memory ? 0 : readConnections
        let threadPool = NIOThreadPool(numberOfThreads: readerCount + 1)
        threadPool.start()
        var opened: [SQLiteConnection] = []
        do {
            let writer = try await Self.connect(storage, threadPool: threadPool, logger: logger)
            opened.append(writer)
            let db = writer.sql(queryLogLevel: .trace)
            if case .file = location {
                try await db.raw("PRAGMA journal_mode = WAL").run()
            }
            try await db.raw("PRAGMA synchronous = FULL").run()
            // Another process holding the write lock: wait with back-off for up to 10 s instead of spinning on a core.
            try await db.raw("PRAGMA busy_timeout = 10000").run()
            try await db.raw("PRAGMA foreign_keys = ON").run()

            // An in-memory database is private to its connection: its reads stay on the writer.
            var readers: [SQLiteConnection] = []
            if case .file = location {
                for _ in 0..<readerCount {
                    let reader = try await Self.connect(storage, threadPool: threadPool, logger: logger)
                    opened.append(reader)
                    let readDB = reader.sql(queryLogLevel: .trace)
                    try await readDB.raw("PRAGMA query_only = ON").run()
                    try await readDB.raw("PRAGMA busy_timeout = 10000").run()
                    readers.append(reader)
                }
            }
            return SQLiteExecutor(
                writer: writer,
                readers: readers,
                threadPool: threadPool,
                commitBatch: commitBatch,
                metrics: metrics,
                logger: logger
            )
        } catch {
            for connection in opened { try? await connection.close() }
            try? await threadPool.shutdownGracefully()
            throw error
        }
    }

    private static func connect(
        _ storage: SQLiteConnection.Storage,
        threadPool: NIOThreadPool,
        logger: Logger
    ) async throws -> SQLiteConnection {
        do {
            return try await SQLiteConnection.open(
                storage: storage,
                threadPool: threadPool,
                logger: logger,
                on: MultiThreadedEventLoopGroup.singleton.any()
            ).get()
        } catch {
            throw StoreError.unavailable("cannot open SQLite database: \(error)")
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
            let result = try await body(self.readers[index].sql(queryLogLevel: .trace))
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
        guard let error = error as? SQLiteError else { return false }
        // The reason is the primary or the extended result code depending on the build; the message is stable.
        return error.message.contains("UNIQUE constraint failed")
    }

    public func shutdown() async throws {
        // Closing must happen even when the caller is being cancelled (a service group tearing down after an error):
        // an unclosed connection loses the WAL checkpoint, so the close runs in a task of its own.
        let connections = self.readers + [self.writer]
        let threadPool = self.threadPool
        let mutex = self.mutex
        let closed = self.closed
        let queue = self.queue
        try await Task {
            await queue.close()
            try await mutex.withLock {
                guard !closed.withLockedValue({ $0 }) else { return }
                closed.withLockedValue { $0 = true }
                // Readers first: the writer's close checkpoints the WAL, which needs no reader holding a snapshot.
                for connection in connections { try await connection.close() }
                try await threadPool.shutdownGracefully()
            }
        }.value
    }

    deinit {
        // A store dropped without shutdown() (an error path) still closes its connections; the pending close keeps
        // each connection alive until it completes.
        if !self.closed.withLockedValue({ $0 }) {
            let closes = (self.readers + [self.writer]).map { $0.close() as EventLoopFuture<Void> }
            // The pool must outlive the closes (they run on it) and must be shut down before it is released.
            let threadPool = self.threadPool
            EventLoopFuture.andAllComplete(closes, on: MultiThreadedEventLoopGroup.singleton.any()).whenComplete { _ in
                threadPool.shutdownGracefully { _ in }
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
