/// A first-in first-out asynchronous lock: holders may suspend while they hold it, unlike an actor's isolation.
actor AsyncMutex {
    private var isLocked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        if !self.isLocked {
            self.isLocked = true
            return
        }
        await withCheckedContinuation { self.waiters.append($0) }
    }

    func unlock() {
        if self.waiters.isEmpty {
            self.isLocked = false
        } else {
            // Ownership passes straight to the next waiter.
            self.waiters.removeFirst().resume()
        }
    }

    nonisolated func withLock<R: Sendable>(_ body: @Sendable () async throws -> R) async throws -> R {
        await self.lock()
        do {
            let result = try await body()
            await self.unlock()
            return result
        } catch {
            await self.unlock()
            throw error
        }
    }
}
