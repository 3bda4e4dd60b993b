public import Foundation
import Synchronization

/// Where the `jti` of accepted proofs are kept until they could no longer be accepted anyway (RFC 9449 §11.1): a
/// proof whose `jti` is already there is a replay. One instance may keep them in memory
/// (``InMemoryDPoPReplayCache``); several instances need a store they share (the server uses its database).
public protocol DPoPReplayCache: Sendable {
    /// Records `jti` of the key `thumbprint` until `until`; false when it was recorded already and has not expired at
    /// `now` (a replay).
    func use(jti: String, thumbprint: String, until: Date, at now: Date) async throws -> Bool
}

/// A bounded in-memory ``DPoPReplayCache`` for one instance: expired entries are dropped as new ones come; when full, a
/// new `jti` is refused (counted as a replay) rather than an unexpired one forgotten, so a flood cannot make room for
/// a replay.
public final class InMemoryDPoPReplayCache: DPoPReplayCache {
    private let state: Mutex<(entries: [String: Date], order: [(String, Date)])>
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
        self.state = Mutex(([:], []))
    }

    public func use(jti: String, thumbprint: String, until: Date, at now: Date) async throws -> Bool {
        let key = thumbprint + " " + jti
        return self.state.withLock { state in
            // Drop what expired, oldest first (entries are kept in insertion order; their expiries grow with it).
            var dropped = 0
            while dropped < state.order.count, state.order[dropped].1 < now {
                state.entries[state.order[dropped].0] = nil
                dropped += 1
            }
            if dropped > 0 { state.order.removeFirst(dropped) }
            if let expiry = state.entries[key], expiry >= now { return false }
            guard state.entries.count < self.capacity else { return false }
            state.entries[key] = until
            state.order.append((key, until))
            return true
        }
    }
}
