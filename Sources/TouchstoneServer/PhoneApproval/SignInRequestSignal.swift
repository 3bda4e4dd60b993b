/// Wakes the long polls waiting on a sign-in request when this instance decides it (`GET
/// /v1/sign-in-requests/{id}?wait=N`). A decision on another instance is seen by the waiters' periodic re-read.
actor SignInRequestSignal {
    private var waiters: [String: [Int: CheckedContinuation<Void, Never>]] = [:]
    /// Waiters whose wait ended before they registered (their timer fired first): they return at once.
    private var finished: Set<Int> = []
    private var nextToken = 0

    /// Wakes everyone waiting on `id`.
    func notify(_ id: String) {
        guard let waiting = self.waiters.removeValue(forKey: id) else { return }
        for continuation in waiting.values { continuation.resume() }
    }

    /// Returns when `id` is notified or `duration` has passed, whichever comes first (or at once when cancelled).
    func wait(_ id: String, for duration: Duration) async {
        let token = self.nextToken
        self.nextToken += 1
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.suspend(id, token) }
            group.addTask {
                try? await Task.sleep(for: duration)
                await self.wake(id, token)
            }
            await group.next()
            group.cancelAll()
            self.wake(id, token)
        }
        self.finished.remove(token)
    }

    private func suspend(_ id: String, _ token: Int) async {
        await withCheckedContinuation { continuation in
            if self.finished.contains(token) {
                continuation.resume()
            } else {
                self.waiters[id, default: [:]][token] = continuation
            }
        }
    }

    private func wake(_ id: String, _ token: Int) {
        if let continuation = self.waiters[id]?.removeValue(forKey: token) {
            if self.waiters[id]?.isEmpty == true { self.waiters[id] = nil }
            continuation.resume()
        } else {
            self.finished.insert(token)
        }
    }
}
