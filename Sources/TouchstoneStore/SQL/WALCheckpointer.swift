import CoreMetrics
import Foundation
import GRDB
import GRDBSQLite
import NIOConcurrencyHelpers
import NIOPosix

/// Copies the write-ahead log back into the database file on a connection and a thread of its own, so that the
/// writer never waits for it.
///
/// SQLite's own automatic checkpoint runs inside the `COMMIT` that crosses the threshold, on the writer: every
/// operation queued behind that commit waited for it (10–25 ms against 2 ms for a commit; about 1 % of the commits of a
/// sign-in load, and so the slowest percent of sign-ins: docs/performance.md, item 13). Here the writer's WAL hook only
/// notes the log's size after each commit; past ``threshold`` new frames the checkpointer copies them with a `PASSIVE`
/// checkpoint (which never blocks the writer or a reader; again, at most three rounds, while the writer added frames
/// during the copy). The writer's next commit then copies the few frames added since, in the commit, so that its next
/// transaction finds the log fully copied and starts it over: only a writer can, and only then.
///
/// Should the log reach ``hardLimit`` frames all the same (readers holding old snapshots, a slow disk), the writer
/// checkpoints in its commit as SQLite would have: the log stays bounded whatever happens.
final class WALCheckpointer: Sendable {
    private struct State {
        var running = false
        var closed = false
        /// The log's frames when the last checkpoint ended (0 once the log started over).
        var base = 0
        /// The log's frames after the last commit.
        var frames = 0
        var statistics = Statistics()
        /// The checkpointer copied the log: the writer's next commit copies the frames added meanwhile.
        var finishInWriter = false
    }

    /// New frames that start a checkpoint.
    let threshold: Int
    /// Frames at which the writer checkpoints in its commit.
    let hardLimit: Int
    private let connection: DatabaseQueue
    private let thread: NIOThreadPool
    private let state = NIOLockedValueBox(State())
    private let duration: CoreMetrics.Timer?

    init(connection: DatabaseQueue, threshold: Int, metrics: (any MetricsFactory)?) {
        precondition(threshold >= 1, "a checkpoint needs a threshold of at least one frame")
        self.connection = connection
        self.threshold = threshold
        self.hardLimit = 4 * threshold
        self.thread = NIOThreadPool(numberOfThreads: 1)
        self.thread.start()
        self.duration = metrics.map { CoreMetrics.Timer(label: "touchstone_sqlite_checkpoint_duration_seconds", factory: $0) }
    }

    /// What the checkpointer saw and did so far (tests).
    struct Statistics: Sendable {
        /// Checkpoints run on the checkpointer's thread.
        var checkpoints = 0
        /// Times the writer started the log over.
        var restarts = 0
        /// The most frames the log held after a commit.
        var maximumFrames = 0
        /// Commits in which the writer checkpointed at the hard limit.
        var writerCheckpointsAtLimit = 0
    }

    var statistics: Statistics { self.state.withLockedValue { $0.statistics } }

    /// Makes `db` (the writer) report its commits here instead of checkpointing in them. The checkpointer must outlive
    /// the hook: ``uninstall(from:)`` before it is released.
    func install(on db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, walHook, Unmanaged.passUnretained(self).toOpaque())
    }

    func uninstall(from db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, nil, nil)
    }

    /// After a commit of the writer (its WAL hook, on the commit thread): the log holds `frames` frames. Returns
    /// whether the writer must checkpoint now itself: to finish what the checkpointer copied, or at ``hardLimit``.
    fileprivate func committed(frames: Int) -> Bool {
        let (start, finish) = self.state.withLockedValue { state -> (Bool, Bool) in
            // Fewer frames than after the previous commit: the log started over.
            if frames < state.frames {
                state.base = 0
                state.statistics.restarts += 1
            }
            state.frames = frames
            state.statistics.maximumFrames = max(state.statistics.maximumFrames, frames)
            if frames >= self.hardLimit { state.statistics.writerCheckpointsAtLimit += 1 }
            let finish = state.finishInWriter
            state.finishInWriter = false
            guard !state.running, !state.closed, frames - state.base >= self.threshold else { return (false, finish) }
            state.running = true
            return (true, finish)
        }
        if start { self.thread.submit { _ in self.run() } }
        return finish || frames >= self.hardLimit
    }

    private func run() {
        let started = DispatchTime.now().uptimeNanoseconds
        var last: (walFrameCount: Int, checkpointedFrameCount: Int)?
        // Again while the writer added frames during the copy (each round is shorter than the one before), three
        // rounds at most.
        for _ in 0..<3 {
            guard !self.state.withLockedValue({ $0.closed }) else { break }
            guard let result = try? self.connection.inDatabase({ db in try db.checkpoint(.passive) }) else { break }
            last = result
            if result.checkpointedFrameCount >= result.walFrameCount { break }
        }
        self.duration?.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds - started))
        self.state.withLockedValue { state in
            state.running = false
            state.statistics.checkpoints += 1
            if let last { state.base = last.walFrameCount }
            // The writer's next commit copies what it added since (a commit's frames: a short copy), so that its
            // next transaction finds the log fully copied and starts it over: only a writer can, and only then.
            state.finishInWriter = !state.closed
        }
    }

    /// Stops checkpointing without waiting (the executor dropped without shutdown).
    func stop() {
        self.state.withLockedValue { $0.closed = true }
        self.thread.shutdownGracefully { _ in }
    }

    /// Stops checkpointing (a running checkpoint finishes first) and closes the connection.
    func close() async throws {
        self.state.withLockedValue { $0.closed = true }
        try await self.thread.shutdownGracefully()
        try self.connection.close()
    }
}

/// The writer's WAL hook: reports the commit; checkpoints in the commit itself after the checkpointer copied the log
/// (the few frames added since) or at the hard limit (as SQLite's default hook does at every threshold).
private let walHook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
    context, connection, _, frames in
    guard let context else { return SQLITE_OK }
    let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
    if checkpointer.committed(frames: Int(frames)) {
        // A failure here is not the commit's: the commit is durable already; the next one tries again.
        _ = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }
    return SQLITE_OK
}
