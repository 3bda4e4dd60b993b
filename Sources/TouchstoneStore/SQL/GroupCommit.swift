import CoreMetrics
import Dispatch
import NIOConcurrencyHelpers
import SQLKit
import Tracing
import GRDB

/// Group commit for a single SQLite connection: operations that queue up while a transaction is being written share
/// the next one, so one `fsync` acknowledges many of them.
///
/// With `synchronous = FULL` every commit waits for the disk; one commit per operation caps a single-writer database
/// at the disk's sync rate. Here the caller that finds the queue idle becomes the *leader*: it opens a transaction,
/// runs its own operation and every operation queued meanwhile (up to ``maximumBatch``), commits once and then wakes
/// the others. Nobody is answered before the commit that makes their work durable, and a failed commit fails every
/// operation in it. Leadership then passes to the oldest waiting operation, so no caller leads for long.
///
/// Each operation keeps its own atomicity: a multi-statement operation runs inside a savepoint rolled back if it
/// throws; a single-statement operation relies on SQLite's statement atomicity. An error that may have rolled back the
/// whole transaction (I/O, disk full, busy...) ends the batch at that operation.
final class GroupCommitQueue: Sendable {
    /// The default for ``maximumBatch``.
    static let defaultMaximumBatch = 64

    /// Operations per transaction at most: bounds the wait of the first operation in a batch (1 turns grouping off).
    let maximumBatch: Int

    private enum Signal {
        case lead
        case done
    }

    /// One queued operation.
    private final class Job: @unchecked Sendable {
        // Mutated only by the leader while it owns the job, then read by the owner after `done`: the continuation's
        // resumption orders the two.
        let needsSavepoint: Bool
        /// Released as soon as it has run: callers pass non-escaping closures (`withoutActuallyEscaping`), which must
        /// not outlive their call while the leader still holds the job.
        var execute: (@Sendable (any SQLDatabase) async -> (any Error)?)?
        var continuation: CheckedContinuation<Signal, Never>?
        var commitError: (any Error)?
        /// Whether the job's own body threw (its own error is then what its owner sees).
        var failed = false

        init(needsSavepoint: Bool, execute: @escaping @Sendable (any SQLDatabase) async -> (any Error)?) {
            self.needsSavepoint = needsSavepoint
            self.execute = execute
        }
    }

    /// Holds an operation's result between the leader running it and its owner reading it.
    private final class Outcome<R>: @unchecked Sendable {
        var result: Result<R, any Error>?
    }

    private struct State {
        var pending: [Job] = []
        var hasLeader = false
        var closed = false
        var statistics = Statistics()
    }

    /// Counts since the queue was made.
    struct Statistics: Sendable, Hashable {
        /// Operations answered after a transaction (committed or not).
        var operations = 0
        /// Transactions attempted.
        var transactions = 0
    }

    var statistics: Statistics { self.state.withLockedValue { $0.statistics } }

    private let database: any SQLDatabase
    private let state = NIOLockedValueBox(State())
    /// Each batch's COMMIT duration (the fsync) and size, when metrics are reported.
    private let commitTimer: Timer?
    private let batchSizes: Recorder?

    init(database: any SQLDatabase, maximumBatch: Int = GroupCommitQueue.defaultMaximumBatch, metrics: (any MetricsFactory)? = nil) {
        precondition(maximumBatch >= 1, "a batch holds at least one operation")
        self.database = database
        self.maximumBatch = maximumBatch
        self.commitTimer = metrics.map { Timer(label: "touchstone_sqlite_commit_duration_seconds", factory: $0) }
        self.batchSizes = metrics.map { Recorder(label: "touchstone_sqlite_commit_batch_size", factory: $0) }
    }

    /// Runs `body` in the next group transaction.
    ///
    /// - Parameter atomic: Whether `body` runs several statements that must apply together (a savepoint).
    func run<R: Sendable>(atomic: Bool, _ body: @Sendable @escaping (any SQLDatabase) async throws -> R) async throws -> R {
        try await self.submit(atomic: atomic, bypassClosed: false, body)
    }

    /// Refuses new operations, waits for the queued ones, then returns.
    func close() async {
        self.state.withLockedValue { $0.closed = true }
        _ = try? await self.submit(atomic: false, bypassClosed: true) { _ in () }
    }

    private func submit<R: Sendable>(
        atomic: Bool,
        bypassClosed: Bool,
        _ body: @Sendable @escaping (any SQLDatabase) async throws -> R
    ) async throws -> R {
        let outcome = Outcome<R>()
        let job = Job(needsSavepoint: atomic) { db in
            do {
                outcome.result = .success(try await body(db))
                return nil
            } catch {
                outcome.result = .failure(error)
                return error
            }
        }
        let signal: Signal = await withCheckedContinuation { continuation in
            job.continuation = continuation
            let leads = self.state.withLockedValue { state -> Bool? in
                if state.closed && !bypassClosed { return nil }
                state.pending.append(job)
                if state.hasLeader { return false }
                state.hasLeader = true
                return true
            }
            switch leads {
            case nil:
                job.commitError = StoreError.unavailable("the database is closed")
                continuation.resume(returning: .done)
            case true?:
                continuation.resume(returning: .lead)
            case false?:
                break
            }
        }
        if case .lead = signal { await self.lead() }
        if let error = job.commitError { throw error }
        guard let result = outcome.result else { throw StoreError.unavailable("the operation did not run") }
        return try result.get()
    }

    /// Runs one batch (which contains the leader's own job, the oldest pending), commits, wakes its members and hands
    /// leadership on.
    private func lead() async {
        var batch = self.take(self.maximumBatch)
        var ran = 0
        var batchError: (any Error)?
        do {
            try await self.database.raw("BEGIN IMMEDIATE").run()
        } catch {
            // Nothing ran: every job of the batch is answered with the error.
            batchError = error
            ran = batch.count
        }
        if batchError == nil {
            do {
                try await self.runJobs(&batch, ran: &ran)
                let start = DispatchTime.now().uptimeNanoseconds
                try await withSpan("sqlite.commit", ofKind: .client) { span in
                    span.attributes["touchstone.batch_size"] = ran
                    try await self.database.raw("COMMIT").run()
                }
                self.commitTimer?.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds - start))
                self.batchSizes?.record(ran)
            } catch {
                batchError = error
                try? await self.database.raw("ROLLBACK").run()
            }
        }
        // Jobs taken but not run go back to the front of the queue, in order.
        let notRun = batch[ran...]
        let next: Job? = self.state.withLockedValue { state in
            state.pending.insert(contentsOf: notRun, at: 0)
            state.statistics.operations += ran
            state.statistics.transactions += 1
            if state.pending.isEmpty {
                state.hasLeader = false
                return nil
            }
            return state.pending[0]
        }
        // The leader's own job is batch[0] and always runs; it is answered by returning from `lead()`.
        for (index, job) in batch[..<ran].enumerated() {
            if let batchError, !job.failed { job.commitError = batchError }
            if index > 0 { job.continuation?.resume(returning: .done) }
        }
        next?.continuation?.resume(returning: .lead)
    }

    /// Runs the batch's jobs in order, adding those queued meanwhile; stops early after an error that may have ended
    /// the transaction. `ran` counts the jobs started (a job that threw inside is counted: it is answered).
    private func runJobs(_ batch: inout [Job], ran: inout Int) async throws {
        while ran < batch.count {
            let job = batch[ran]
            ran += 1
            if job.needsSavepoint { try await self.database.raw("SAVEPOINT job").run() }
            let execute = job.execute
            job.execute = nil
            let error = await execute?(self.database)
            job.failed = error != nil
            if job.needsSavepoint {
                if error != nil { try await self.database.raw("ROLLBACK TO job").run() }
                try await self.database.raw("RELEASE job").run()
            } else if let error, Self.mayEndTransaction(error) {
                return
            }
            if ran == batch.count, batch.count < self.maximumBatch {
                batch += self.take(self.maximumBatch - batch.count)
            }
        }
    }

    private func take(_ count: Int) -> [Job] {
        self.state.withLockedValue { state in
            let taken = Array(state.pending.prefix(count))
            state.pending.removeFirst(taken.count)
            return taken
        }
    }

    /// Whether SQLite may have rolled back the whole transaction after this error (anything but a statement-level
    /// failure such as a violated constraint, or an error that is not SQLite's).
    private static func mayEndTransaction(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        switch error.resultCode {
        case .SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_TOOBIG, .SQLITE_RANGE, .SQLITE_ERROR: return false
        default: return true
        }
    }
}
