#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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
    /// Posts an `application/x-www-form-urlencoded` body to a URL and answers the HTTP status: how back-channel logout
    /// tokens leave (nil: over HTTP; tests record them instead).
    public var postForm: (@Sendable (_ url: String, _ body: String) async throws -> Int)? = nil
    /// Posts a webhook and answers what came of it: how webhooks leave (nil: over HTTP with the SSRF checks of
    /// `WebhookPoster`; tests receive them instead).
    public var postWebhook: (@Sendable (WebhookPost) async -> WebhookPostResult)? = nil
    /// Where queued mail goes (nil: the configured SMTP server or mail folder; tests keep the mails instead).
    public var mailTransport: (any MailTransport)? = nil

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
            randomBytes: systemRandomBytes
        )
    }
}

/// `count` bytes of the operating system's CSPRNG, in one call per value: `getentropy(3)` (`getrandom(2)`) on Linux,
/// the source `SystemRandomNumberGenerator` uses (which would make one call per 8 bytes); `arc4random_buf` on Apple
/// platforms.
///
/// BoringSSL's generator, used before, made the same system call for its additional input on every value and then
/// ran its own DRBG and a key object around it (about 1.8 % of a sign-in's CPU, about four values per sign-in; docs/performance.md, item 13).
@Sendable func systemRandomBytes(_ count: Int) -> [UInt8] {
    guard count > 0 else { return [] }
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        #if !canImport(Darwin)
        var filled = 0
        while filled < count {
            // getentropy(3): getrandom(2) on the urandom source, at most 256 bytes a call (every value the server
            // draws is shorter); it blocks only until the kernel's pool is first initialised.
            let chunk = min(256, count - filled)
            guard getentropy(buffer.baseAddress! + filled, chunk) == 0 else {
                // As SystemRandomNumberGenerator does: without random bytes there is no secure server.
                fatalError("getentropy failed with errno \(errno)")
            }
            filled += chunk
        }
        #else
        arc4random_buf(buffer.baseAddress!, count)
        #endif
        initialized = count
    }
}
