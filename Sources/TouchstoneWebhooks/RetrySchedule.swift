public import Foundation

/// When a failed delivery is tried again: exponential backoff with jitter, for about three days.
///
/// After the first attempt fails the next comes 5 seconds later, then 5 minutes, 30 minutes, 2 hours, 5 hours, and
/// every 10 hours six times: 12 attempts over about 67.6 hours (2.8 days). Each wait is moved by up to ±20 % at
/// random, so that endpoints that failed together are not retried together. After the last attempt the delivery is
/// marked failed.
public struct RetrySchedule: Sendable, Hashable {
    /// The waits after the first, second, ... failed attempt.
    public let delays: [TimeInterval]
    /// The largest fraction by which a wait is moved either way.
    public let jitter: Double

    public static let standard = RetrySchedule(
        delays: [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600, 10 * 3600, 10 * 3600, 10 * 3600, 10 * 3600],
        jitter: 0.2
    )

    public init(delays: [TimeInterval], jitter: Double) {
        self.delays = delays
        self.jitter = jitter
    }

    /// Attempts in a round: the first and one per wait.
    public var maximumAttempts: Int { self.delays.count + 1 }

    /// The whole schedule without jitter (about 67.6 hours for ``standard``).
    public var span: TimeInterval { self.delays.reduce(0, +) }

    /// When to try again after `failedAttempts` attempts of a round have failed, or nil when the round is over.
    ///
    /// - Parameter unit: a random value in 0..<1 (injected: tests choose it).
    public func nextAttempt(after failedAttempts: Int, at now: Date, unit: Double) -> Date? {
        guard failedAttempts >= 1, failedAttempts <= self.delays.count else { return nil }
        let base = self.delays[failedAttempts - 1]
        let factor = 1 + self.jitter * (2 * min(max(unit, 0), 1) - 1)
        return now.addingTimeInterval(base * factor)
    }
}
