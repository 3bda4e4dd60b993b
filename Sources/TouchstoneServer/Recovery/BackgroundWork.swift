import Foundation
import Logging
import NIOConcurrencyHelpers

/// Work a request starts and does not wait for: what `POST /v1/password-resets` and `POST /v1/email-codes` do for an
/// address (look it up, store a code, queue a mail) runs after the 202, so the answer's content and timing are the
/// same for addresses with and without an account. Tests wait with ``settle()``.
final class BackgroundWork: Sendable {
    private let tasks = NIOLockedValueBox<[Int: Task<Void, Never>]>([:])
    private let counter = NIOLockedValueBox(0)
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Runs `body` in a task of its own (it keeps the request's task-local client information); a failure is logged.
    func run(_ what: String, _ body: @escaping @Sendable () async throws -> Void) {
        let id = self.counter.withLockedValue { counter in
            counter += 1
            return counter
        }
        let logger = self.logger
        // Registered under the lock it removes itself with, so it cannot end before it is registered.
        self.tasks.withLockedValue { tasks in
            tasks[id] = Task {
                do {
                    try await body()
                } catch {
                    logger.warning("\(what) failed: \(error)")
                }
                _ = self.tasks.withLockedValue { $0.removeValue(forKey: id) }
            }
        }
    }

    /// Waits for the work started so far.
    func settle() async {
        let running = self.tasks.withLockedValue { Array($0.values) }
        for task in running { await task.value }
    }
}
