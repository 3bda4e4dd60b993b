import Foundation
import Synchronization

/// The bound a server with its replay record in memory keeps on the `iat` of the proofs it accepts, recorded on its
/// database before it accepts a proof past it (``DPoPGate/issueMarkSetting``). The next process's fence
/// (``DPoPRestartFence/earlierIssuedUntil``) then covers every proof this one accepted, even when the host's clock is
/// set back between the two: the start alone bounds them only while clocks go forward.
///
/// A mark reaches ``margin`` past the proof that asked for it, so it is written at most once per `margin` of proofs
/// (every 10 s by default), and a request waits for the write only then. The margin is also how long after a restart
/// fresh proofs may still need the new process's nonce (once per client: the SDKs keep the nonce). One write is in
/// flight at a time, and a new one is made only for a proof past the last mark written, so the marks on the database
/// never go back.
final class DPoPIssueMark: Sendable {
    let margin: TimeInterval
    /// The latest mark known written (read without waiting on every proof).
    private let written: Mutex<Date?>
    private let writer: Writer

    /// - Parameters:
    ///   - written: The mark on the database at the start (nil: none).
    ///   - save: Records a mark on the database.
    init(written: Date?, margin: TimeInterval = 10, save: @escaping @Sendable (Date) async throws -> Void) {
        self.margin = margin
        self.written = Mutex(written)
        self.writer = Writer(save: save)
    }

    /// The latest mark known written.
    var mark: Date? { self.written.withLock { $0 } }

    /// Returns once a mark at or past `issuedAt` is written: at once when one is, else after writing one.
    ///
    /// - Throws: the store's error when the mark cannot be written (the proof must then be refused).
    func cover(_ issuedAt: Date) async throws {
        if let mark = self.mark, issuedAt <= mark { return }
        try await self.writer.cover(issuedAt, mark: self)
    }

    fileprivate func noteWritten(_ mark: Date) {
        self.written.withLock { $0 = max($0 ?? mark, mark) }
    }

    /// Serialises the writes: one in flight; the others wait for it and look again.
    private actor Writer {
        let save: @Sendable (Date) async throws -> Void
        private var inFlight: Task<Void, any Error>?

        init(save: @escaping @Sendable (Date) async throws -> Void) { self.save = save }

        func cover(_ issuedAt: Date, mark: DPoPIssueMark) async throws {
            while true {
                if let written = mark.mark, issuedAt <= written { return }
                let task: Task<Void, any Error>
                let own = self.inFlight == nil
                if let inFlight = self.inFlight {
                    task = inFlight
                } else {
                    let target = issuedAt.addingTimeInterval(mark.margin)
                    let save = self.save
                    task = Task {
                        try await save(target)
                        mark.noteWritten(target)
                    }
                    self.inFlight = task
                }
                // Whoever resumes first clears the finished write, so a waiter never spins on it.
                let result = await task.result
                if self.inFlight == task { self.inFlight = nil }
                if own, case .failure(let error) = result { throw error }
            }
        }
    }
}
