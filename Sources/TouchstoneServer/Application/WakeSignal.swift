import NIOConcurrencyHelpers
import ServiceLifecycle

/// Wakes a background worker (the mail sender, the deferred-work worker) at once instead of at its next poll; a wake
/// with no one waiting is kept for the next wait.
final class WakeSignal: Sendable {
    private let state = NIOLockedValueBox<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    init() {}

    func wake() {
        let waiter = self.state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns on a wake, after `timeout`, or when the task is cancelled.
    func wait(upTo timeout: Duration) async {
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.wake()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = self.state.withLockedValue { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            self.wake()
        }
        self.state.withLockedValue { $0.pending = false }
    }

    /// Runs `step` until the server shuts down: after every wake and at least every `interval`. On a graceful shutdown
    /// (SIGTERM) the step in hand finishes and no other starts; the service group cancels it after
    /// `TOUCHSTONE_SHUTDOWN_GRACE_SECONDS`.
    func loopUntilShutdown(every interval: Duration, _ step: () async -> Void) async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await step()
            await withGracefulShutdownHandler {
                await self.wait(upTo: interval)
            } onGracefulShutdown: {
                self.wake()
            }
        }
    }
}
