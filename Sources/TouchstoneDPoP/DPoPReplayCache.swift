import Crypto
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
/// a replay. An entry is 16 bytes of SHA-256 over the key's thumbprint and the `jti` (a collision needs SHA-256's) and
/// its expiry: up to about 100 bytes with the tables' spare room, so 1,000,000 entries take at most about 100 MB.
public final class InMemoryDPoPReplayCache: DPoPReplayCache {
    /// The first 16 bytes of SHA-256(thumbprint, 0, jti).
    struct Key: Hashable {
        var high: UInt64
        var low: UInt64

        init(thumbprint: String, jti: String) {
            var hasher = SHA256()
            hasher.update(data: Array(thumbprint.utf8))
            hasher.update(data: [0])
            hasher.update(data: Array(jti.utf8))
            let digest = hasher.finalize()
            (self.high, self.low) = digest.withUnsafeBytes { bytes in
                (bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
        }
    }

    private struct State {
        var entries: [Key: Date] = [:]
        /// The entries in the order they came, from `head` on (the ones before it were dropped): a `jti`'s expiry
        /// depends on its proof's `iat`, so the order is only roughly that of their expiries.
        var order: [(key: Key, until: Date)] = []
        var head = 0
    }

    private let state = Mutex(State())
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    public func use(jti: String, thumbprint: String, until: Date, at now: Date) async throws -> Bool {
        self.record(jti: jti, thumbprint: thumbprint, until: until, at: now)
    }

    /// ``use(jti:thumbprint:until:at:)`` without suspending: true when `jti` was not recorded (and now is).
    public func record(jti: String, thumbprint: String, until: Date, at now: Date) -> Bool {
        let key = Key(thumbprint: thumbprint, jti: jti)
        return self.state.withLock { state in
            // Drop what expired from the front. An entry is removed only by its own expiry: a `jti` that expired behind
            // a later one and came again has a newer entry further on, which must stay.
            while state.head < state.order.count, state.order[state.head].until < now {
                let (dropped, expiry) = state.order[state.head]
                if state.entries[dropped] == expiry { state.entries[dropped] = nil }
                state.head += 1
            }
            // The dropped front is cut off once it is most of the array, so each entry is moved a bounded number of
            // times (removing it at every call moved the whole array: 100,000 entries a call when full).
            if state.head >= 1_024, state.head * 2 >= state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            if let expiry = state.entries[key], expiry >= now { return false }
            guard state.entries.count < self.capacity else { return false }
            state.entries[key] = until
            state.order.append((key, until))
            return true
        }
    }

    /// The entries kept now (expired ones not yet dropped included).
    public var count: Int { self.state.withLock { $0.entries.count } }
}
