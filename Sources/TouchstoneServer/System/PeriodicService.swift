import ServiceLifecycle

/// Runs `step` every `interval` until shutdown; shutdown does not wait for a step stuck on a database that does not
/// answer. Used to reload the runtime policy (a change made through another instance applies here too) and to make
/// the token-signing keys the schedule says are due.
struct PeriodicService: Service {
    let interval: Duration
    let step: @Sendable () async -> Void

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    await self.step()
                    try await Task.sleep(for: self.interval)
                }
            } catch {
                return
            }
        }
    }
}
