import Crypto
public import Foundation
public import Logging
public import TouchstoneStore
public import ServiceLifecycle

/// What the server reads from the outside world, injectable so tests control time and randomness.
public struct TouchstoneDependencies: Sendable {
    /// The current time.
    public var now: @Sendable () -> Date
    /// `count` cryptographically secure random bytes.
    public var randomBytes: @Sendable (Int) -> [UInt8]
    /// A store to use instead of opening ``TouchstoneConfiguration/database``.
    public var store: (any TouchstoneStore)?
    public var logger: Logger?
    /// Background services to run with the server (the OTLP exporter of ``TouchstoneTracing/bootstrap(_:logger:)``).
    public var services: [any Service] = []

    public init(
        now: @escaping @Sendable () -> Date,
        randomBytes: @escaping @Sendable (Int) -> [UInt8],
        store: (any TouchstoneStore)? = nil,
        logger: Logger? = nil
    ) {
        self.now = now
        self.randomBytes = randomBytes
        self.store = store
        self.logger = logger
    }

    /// The system clock and the system's secure random number generator.
    public static var live: TouchstoneDependencies {
        TouchstoneDependencies(
            now: { Date() },
            randomBytes: { count in
                // BoringSSL's CSPRNG (seeded by the OS): one call per value instead of a system call per 8 bytes.
                SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
            }
        )
    }
}
