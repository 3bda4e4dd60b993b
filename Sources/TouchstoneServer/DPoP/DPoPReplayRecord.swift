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
        /// server holds its lock): as good a check while the process lives, without a write per request. The fence
        /// keeps the proofs the process before accepted from being accepted again after a restart.
        case memory(InMemoryDPoPReplayCache, fence: DPoPRestartFence?)

        var fence: DPoPRestartFence? {
            if case .memory(_, let fence) = self { return fence }
            return nil
        }
    }

    /// The setting that records a server's start on a database of its own: its presence at a start means a server ran
    /// on this database before, whose memory of accepted proofs is gone.
    static let startSetting = "server.started_at"

    /// At most this many `jti` in memory (the proofs of the last proof lifetime, 66 s by default): 30,000 proofs a second,
    /// far past what a server on one SQLite file answers, in at most about 200 MB, used only at that rate; a proof past
    /// it is refused as a replay.
    static let memoryCapacity = 2_000_000

    /// The replay record for `store`: its database when other instances may share it, else memory, fenced when a
    /// server ran on this database before (``startSetting``). When the setting cannot be read or written, a fence all
    /// the same: an unwritten start would let the next start believe no server ran before it.
    static func replayRecord(
        for store: any TouchstoneStore, settings: DPoPSettings, now: Date, randomBytes: (Int) -> [UInt8], logger: Logger
    ) async -> ReplayRecord {
        guard store.servesOneProcess else { return .database }
        var ranBefore = true
        do {
            let earlier = try await store.setting(name: Self.startSetting)
            try await store.saveSetting(name: Self.startSetting, value: String(now.millis), at: now)
            ranBefore = earlier != nil
        } catch {
            logger.warning("cannot read or record the server's start; DPoP proofs made before it need a new nonce: \(error)")
        }
        let fence =
            ranBefore
            ? DPoPRestartFence(
                startedAt: now,
                allowedSkew: TimeInterval(settings.allowedClockSkew.components.seconds),
                maximumAge: TimeInterval(settings.proofMaximumAge.components.seconds),
                randomBytes: randomBytes
            ) : nil
        return .memory(InMemoryDPoPReplayCache(capacity: Self.memoryCapacity), fence: fence)
    }
}
