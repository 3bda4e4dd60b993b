public import Foundation
import TouchstoneCrypto

/// What keeps a replay record held in memory (``InMemoryDPoPReplayCache``) safe across a restart: the record of the
/// process before is gone, so a proof it accepted must not be accepted again by this one.
///
/// The process before accepted only proofs whose `iat` was at most its clock plus the allowed skew, so at most
/// ``startedAt`` plus the skew while clocks only go forward, and at most ``earlierIssuedUntil`` (the bound that process
/// recorded before it accepted a proof past it) if this host's clock was set back between the two. Until such proofs
/// are stale anyway (``maximumAge`` after the later of the two), one of them is accepted only
/// with ``nonce``, which this process made at its start and no earlier one ever sent: a proof that carries it was made
/// after the restart and cannot be a replay. Without it the answer is `use_dpop_nonce` with the nonce (RFC 9449 §8),
/// which clients follow with one more request. A proof made later than that needs nothing, and the fence ends by itself
/// once the proofs it guards are stale.
public struct DPoPRestartFence: Sendable, Hashable {
    /// This process's nonce (22 characters of base64url, 128 random bits).
    public let nonce: String
    public let startedAt: Date
    /// The bound on the `iat` of the proofs the processes before accepted, as they recorded it; nil when none did.
    public let earlierIssuedUntil: Date?
    public let allowedSkew: TimeInterval
    public let maximumAge: TimeInterval

    /// - Parameter randomBytes: the source of the nonce's 16 bytes (the system's generator in production).
    public init(
        startedAt: Date, earlierIssuedUntil: Date? = nil, allowedSkew: TimeInterval, maximumAge: TimeInterval, randomBytes: (Int) -> [UInt8]
    ) {
        self.nonce = Base64.urlEncode(randomBytes(16))
        self.startedAt = startedAt
        self.earlierIssuedUntil = earlierIssuedUntil
        self.allowedSkew = allowedSkew
        self.maximumAge = maximumAge
    }

    /// The latest `iat` a proof accepted by the process before could carry.
    public var latestEarlierIssue: Date {
        max(self.startedAt.addingTimeInterval(self.allowedSkew), self.earlierIssuedUntil ?? .distantPast)
    }

    /// Whether the fence still guards proofs at `now`: until the last proof it guards is stale.
    public func isActive(at now: Date) -> Bool {
        now.timeIntervalSince(self.latestEarlierIssue) <= self.maximumAge
    }

    /// Whether a proof issued at `issuedAt` with `nonce` must be refused with `use_dpop_nonce`: it could have been
    /// accepted before the restart, and it does not carry this process's nonce.
    public func demandsNonce(issuedAt: Date, nonce: String?, at now: Date) -> Bool {
        guard self.isActive(at: now), issuedAt <= self.latestEarlierIssue else { return false }
        return nonce.map { !self.accepts($0, at: now) } ?? true
    }

    /// Whether `nonce` is this process's while the fence stands (it then also satisfies a demand for the server's
    /// nonces, `TOUCHSTONE_DPOP_NONCE=on`).
    public func accepts(_ nonce: String, at now: Date) -> Bool {
        self.isActive(at: now) && ConstantTime.equal(Array(nonce.utf8), Array(self.nonce.utf8))
    }
}
