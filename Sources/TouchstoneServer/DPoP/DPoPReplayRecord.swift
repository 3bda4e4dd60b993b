import Foundation
import Logging
import TouchstoneDPoP
import TouchstoneStore

extension DPoPGate {
    /// Where the `jti` of accepted proofs are kept until the proofs are stale (RFC 9449 §11.1), so that a second use is
    /// refused on every instance.
    enum ReplayRecord: Sendable {
        /// The database, shared by every instance (PostgreSQL): one statement checks and records a `jti`, so two
        /// instances cannot both accept a proof.
        case database
        /// This process's memory, for a database no other server uses (an SQLite file serves one instance, and the
        /// server holds its lock): as good a check while the process lives, without a write per request.
        case memory(Memory)

        var fence: DPoPRestartFence? {
            if case .memory(let memory) = self { return memory.fence }
            return nil
        }
    }

    /// The replay record in memory, and what keeps it safe across a restart.
    struct Memory: Sendable {
        let cache: InMemoryDPoPReplayCache
        /// Keeps the proofs the process before accepted from being accepted again; nil on a database no server used.
        let fence: DPoPRestartFence?
        /// The bound on the accepted proofs' `iat` the next process's fence starts from.
        let issueMark: DPoPIssueMark
    }

    /// The setting that records a server's start on a database of its own: its presence at a start means a server ran
    /// on this database before, whose memory of accepted proofs is gone.
    static let startSetting = "server.started_at"
    /// The setting that bounds the `iat` of the proofs accepted with the replay record in memory (``DPoPIssueMark``), in
    /// milliseconds since 1970.
    static let issueMarkSetting = "dpop.issued_until"

    /// At most this many `jti` in memory (the proofs of the last proof lifetime, 66 s by default): 30,000 proofs a second,
    /// far past what a server on one SQLite file answers, in at most about 200 MB, used only at that rate; a proof past
    /// it is refused as a replay.
    static let memoryCapacity = 2_000_000

    /// The replay record for `store`: its database when other instances may share it, else memory, fenced when a
    /// server ran on this database before (``startSetting``) up to the later of this start and the mark the servers
    /// before recorded (``issueMarkSetting``). When the settings cannot be read or written, a fence all the same: an
    /// unwritten start would let the next start believe no server ran before it.
    static func replayRecord(
        for store: any TouchstoneStore, settings: DPoPSettings, clock: @escaping @Sendable () -> Date, randomBytes: (Int) -> [UInt8],
        logger: Logger
    ) async -> ReplayRecord {
        guard store.servesOneProcess else { return .database }
        let now = clock()
        var ranBefore = true
        var earlierMark: Date?
        do {
            let earlier = try await store.setting(name: Self.startSetting)
            earlierMark = try await store.setting(name: Self.issueMarkSetting).flatMap { Int64($0) }.map(Date.init(millis:))
            try await store.saveSetting(name: Self.startSetting, value: String(now.millis), at: now)
            ranBefore = earlier != nil
        } catch {
            logger.warning("cannot read or record the server's start; DPoP proofs made before it need a new nonce: \(error)")
        }
        let fence =
            ranBefore
            ? DPoPRestartFence(
                startedAt: now,
                earlierIssuedUntil: earlierMark,
                allowedSkew: TimeInterval(settings.allowedClockSkew.components.seconds),
                maximumAge: TimeInterval(settings.proofMaximumAge.components.seconds),
                randomBytes: randomBytes
            ) : nil
        let issueMark = DPoPIssueMark(written: earlierMark) { mark in
            try await store.saveSetting(name: Self.issueMarkSetting, value: String(mark.millis), at: clock())
        }
        return .memory(Memory(cache: InMemoryDPoPReplayCache(capacity: Self.memoryCapacity), fence: fence, issueMark: issueMark))
    }
}
