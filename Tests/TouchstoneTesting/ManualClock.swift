public import Foundation

/// A clock that moves only when a test says so.
public final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.current = start
    }

    public var now: Date {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.current
    }

    public func advance(by seconds: TimeInterval) {
        self.lock.lock()
        self.current = self.current.addingTimeInterval(seconds)
        self.lock.unlock()
    }
}
