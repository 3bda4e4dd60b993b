public import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import TouchstoneStore

/// A token bucket's size: `capacity` requests at once, one more every `interval`.
public struct RateLimit: Sendable, Hashable, CustomStringConvertible {
    public var capacity: Int
    public var interval: TimeInterval

    public init(capacity: Int, interval: TimeInterval) {
        self.capacity = capacity
        self.interval = interval
    }

    /// Parses `N/second`, `N/minute` or `N/hour` (capacity N, refilled at N per period), or `N/DURATION` such as
    /// `300/5m` (see ``countPerPeriod(_:)``).
    public init?(_ text: String) {
        guard let (count, period) = countPerPeriod(text) else { return nil }
        self.init(capacity: count, interval: period / TimeInterval(count))
    }

    public var description: String { "\(self.capacity) per \(Int((self.interval * Double(self.capacity)).rounded())) s" }
}

/// A limit on failures: at most `count` in a window of `window` seconds; past it, refusals for `window`.
public struct FailureLimit: Sendable, Hashable, CustomStringConvertible {
    public var count: Int
    public var window: TimeInterval

    public init(count: Int, window: TimeInterval) {
        self.count = count
        self.window = window
    }

    /// Parses `N/DURATION`: `50/15m`, `100/1h`, `20/600s`, or `N/minute` and `N/hour` (see ``countPerPeriod(_:)``).
    public init?(_ text: String) {
        guard let (count, period) = countPerPeriod(text) else { return nil }
        self.init(count: count, window: period)
    }

    public var description: String { "\(self.count) per \(Int(self.window)) s" }
}

/// Parses `N/DURATION`, the form of every limit setting: N from 1 to 1,000,000; DURATION a unit (`second`/`sec`/`s`,
/// `minute`/`min`/`m`, `hour`/`h`) with an optional whole number of them before it (`15m`, `600s`, `2h`).
func countPerPeriod(_ text: String) -> (count: Int, period: TimeInterval)? {
    let parts = text.split(separator: "/")
    guard parts.count == 2, let count = Int(parts[0]), (1...1_000_000).contains(count) else { return nil }
    let duration = parts[1]
    let units: [(String, TimeInterval)] = [
        ("second", 1), ("minute", 60), ("hour", 3600), ("sec", 1), ("min", 60), ("s", 1), ("m", 60), ("h", 3600),
    ]
    guard let (unit, seconds) = units.first(where: { duration.hasSuffix($0.0) }) else { return nil }
    let number = duration.dropLast(unit.count)
    let amount = number.isEmpty ? 1 : Int(number)
    guard let amount, (1...86_400).contains(amount) else { return nil }
    return (count, TimeInterval(amount) * seconds)
}

/// Rate limit settings (`TOUCHSTONE_RATE_LIMITS`, `..._PER_ADDRESS`, `..._PER_ACCOUNT`, `TOUCHSTONE_TRUSTED_PROXIES`).
public struct RateLimitSettings: Sendable {
    /// Off only for tests and benchmarks.
    public var enabled = true
    /// Per client address and endpoint group, kept in each instance's memory.
    public var perAddress = RateLimit(capacity: 300, interval: 0.2)
    /// Per account, registration or credential, kept in the database so that every instance shares it.
    public var perAccount = RateLimit(capacity: 20, interval: 3)
    /// Per OpenID client at the token, revocation and introspection endpoints, kept in each instance's memory: a
    /// ceiling against a runaway or compromised client, far above what a busy web app needs.
    public var perClient = RateLimit(capacity: 20_000, interval: 1.0 / 5_000)
    /// Peers whose `X-Forwarded-For` is believed.
    public var trustedProxies: Set<String> = []
    /// Failed password sign-ins for one email before it is throttled.
    public var loginFailureThreshold = 5
    /// The first wait after the threshold; each further failure doubles it, up to ``loginMaximumDelay``.
    public var loginBaseDelay: TimeInterval = 30
    public var loginMaximumDelay: TimeInterval = 15 * 60
    /// Failures older than this are forgotten.
    public var loginFailureWindow: TimeInterval = 3600
    /// Failed credential checks (wrong passwords and PINs, whichever account) from one client address before the
    /// address is refused on those routes for the window; kept in the database. Successes neither count nor reset.
    public var failedCredentialsPerAddress = FailureLimit(count: 50, window: 15 * 60)

    public init() {}

    /// Reads `TOUCHSTONE_RATE_LIMITS`, `TOUCHSTONE_RATE_LIMIT_PER_*`, `TOUCHSTONE_LOGIN_FAILURE_THRESHOLD`,
    /// `TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS` and `TOUCHSTONE_TRUSTED_PROXIES`.
    mutating func read(_ environment: [String: String]) throws {
        if let value = environment["TOUCHSTONE_RATE_LIMITS"] {
            switch value.lowercased() {
            case "on", "true": self.enabled = true
            case "off", "false": self.enabled = false
            default: throw ConfigurationError("TOUCHSTONE_RATE_LIMITS", value)
            }
        }
        if let value = environment["TOUCHSTONE_RATE_LIMIT_PER_ADDRESS"] {
            guard let limit = RateLimit(value) else { throw ConfigurationError("TOUCHSTONE_RATE_LIMIT_PER_ADDRESS", value) }
            self.perAddress = limit
        }
        if let value = environment["TOUCHSTONE_RATE_LIMIT_PER_CLIENT"] {
            guard let limit = RateLimit(value) else { throw ConfigurationError("TOUCHSTONE_RATE_LIMIT_PER_CLIENT", value) }
            self.perClient = limit
        }
        if let value = environment["TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT"] {
            guard let limit = RateLimit(value) else { throw ConfigurationError("TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT", value) }
            self.perAccount = limit
        }
        if let value = environment["TOUCHSTONE_LOGIN_FAILURE_THRESHOLD"] {
            guard let threshold = Int(value), (1...1000).contains(threshold) else {
                throw ConfigurationError("TOUCHSTONE_LOGIN_FAILURE_THRESHOLD", value)
            }
            self.loginFailureThreshold = threshold
        }
        if let value = environment["TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS"] {
            guard let limit = FailureLimit(value) else { throw ConfigurationError("TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS", value) }
            self.failedCredentialsPerAddress = limit
        }
        if let list = environment["TOUCHSTONE_TRUSTED_PROXIES"] {
            self.trustedProxies = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
    }
}

/// In-memory GCRA buckets for per-address limits: cheap, and per instance (documented as such).
final class AddressBuckets: Sendable {
    private let state = NIOLockedValueBox<[String: Int64]>([:])
    private let maximumKeys: Int

    init(maximumKeys: Int = 100_000) {
        self.maximumKeys = maximumKeys
    }

    /// `nil` when allowed, or the wait in seconds.
    func take(_ key: String, limit: RateLimit, at now: Date) -> TimeInterval? {
        let nowMillis = Int64((now.timeIntervalSince1970 * 1000).rounded())
        let step = max(1, Int64((limit.interval * 1000).rounded()))
        let burst = Int64(limit.capacity) * step
        return self.state.withLockedValue { buckets in
            if buckets.count >= self.maximumKeys {
                // Full buckets carry no information: drop them (and, if that is not enough, everything).
                buckets = buckets.filter { $0.value > nowMillis }
                if buckets.count >= self.maximumKeys { buckets.removeAll(keepingCapacity: true) }
            }
            let tat = max(buckets[key] ?? nowMillis, nowMillis) + step
            guard tat - nowMillis <= burst else { return TimeInterval(tat - nowMillis - burst) / 1000 }
            buckets[key] = tat
            return nil
        }
    }
}

/// Applies rate limits and password throttling, answering 429 with `Retry-After`, and records each refusal.
struct RateLimiter: Sendable {
    let settings: RateLimitSettings
    let store: any AbuseStore
    let buckets: AddressBuckets
    let audit: AuditLog
    let now: @Sendable () -> Date

    /// Per-address limit of an endpoint group.
    func checkAddress(_ group: String, client: ClientInfo) async throws {
        guard self.settings.enabled, let address = client.address else { return }
        if let wait = self.buckets.take("\(group):\(address)", limit: self.settings.perAddress, at: self.now()) {
            try await self.refuse(wait, scope: "address:\(group)")
        }
    }

    /// Per-client limit of the OpenID provider's back-end endpoints (``RateLimitSettings/perClient``).
    func checkClient(_ clientId: String) async throws {
        guard self.settings.enabled else { return }
        if let wait = self.buckets.take("oauth-client:\(clientId)", limit: self.settings.perClient, at: self.now()) {
            try await self.refuse(wait, scope: "client")
        }
    }

    /// Per-account limit (an email, a registration, a credential): shared by every instance through the database.
    func checkAccount(_ key: String, userId: String? = nil, registrationId: String? = nil) async throws {
        guard self.settings.enabled else { return }
        let limit = self.settings.perAccount
        if let wait = try await self.store.takeRateLimitToken(
            key: key,
            capacity: Int64(limit.capacity),
            interval: limit.interval,
            at: self.now()
        ) {
            try await self.refuse(wait, scope: "account", userId: userId, registrationId: registrationId)
        }
    }

    /// Counts a mail to `email` against `limit` (shared by every instance, kept for unknown addresses as for known ones,
    /// so a refusal reveals nothing): 429 `rate_limited` once the address had its share.
    func checkMail(to email: String, limit: RateLimit) async throws {
        if let wait = try await self.takeMailToken(to: email, limit: limit) {
            try await self.refuse(wait, scope: "mail")
        }
    }

    /// ``checkMail(to:limit:)`` that answers instead of throwing: nil when the mail may go, else how long until it may.
    func takeMailToken(to email: String, limit: RateLimit) async throws -> TimeInterval? {
        guard self.settings.enabled else { return nil }
        return try await self.store.takeRateLimitToken(key: "mail:\(email)", capacity: Int64(limit.capacity), interval: limit.interval, at: self.now())
    }

    private func refuse(_ wait: TimeInterval, scope: String, userId: String? = nil, registrationId: String? = nil) async throws
        -> Never
    {
        let error = APIError.rateLimited(retryAfter: wait)
        self.audit.metrics?.rateLimited(scope: scope)
        await self.audit.recordFailure(.rateLimited, error: error, userId: userId, registrationId: registrationId)
        throw error
    }

    // MARK: Failed credential checks per address

    /// Refuses a credential check (password or PIN sign-in) from an address that failed too many: 429 `rate_limited`.
    func checkFailedCredentials(client: ClientInfo) async throws {
        guard self.settings.enabled, let address = client.address else { return }
        let now = self.now()
        if let block = try await self.store.addressBlock(address: address, at: now), let until = block.blockedUntil {
            try await self.refuse(until.timeIntervalSince(now), scope: "address:failed_credentials")
        }
    }

    /// Counts a failed credential check from the client's address; the failure that reaches the limit is audited as
    /// `address.blocked`.
    func credentialCheckFailed(client: ClientInfo, userId: String? = nil, registrationId: String? = nil) async throws {
        guard self.settings.enabled, let address = client.address else { return }
        let limit = self.settings.failedCredentialsPerAddress
        let failures = try await self.store.recordFailedCredentialCheck(
            address: address,
            limit: Int64(limit.count),
            window: limit.window,
            at: self.now()
        )
        if failures.failures == Int64(limit.count) {
            try await self.audit.record(
                .addressBlocked,
                .info,
                userId: userId,
                registrationId: registrationId,
                reason: "\(failures.failures) failed credential checks within \(Int(limit.window)) s"
            )
        }
    }

    // MARK: Password throttling

    /// Refuses a password sign-in while the email is throttled (whatever the password): 429 `login_throttled`.
    func checkLogin(email: String) async throws {
        guard self.settings.enabled, let failures = try await self.store.loginFailures(key: Self.loginKey(email)) else { return }
        if let wait = self.throttle(failures, at: self.now()) {
            self.audit.metrics?.rateLimited(scope: "login_throttle")
            throw APIError.loginThrottled(retryAfter: wait)
        }
    }

    /// Counts a failed password sign-in.
    /// Counts a failed password sign-in; returns whether this failure is the one that starts the throttle.
    @discardableResult
    func loginFailed(email: String) async throws -> Bool {
        guard self.settings.enabled else { return false }
        let failures = try await self.store.recordLoginFailure(key: Self.loginKey(email), window: self.settings.loginFailureWindow, at: self.now())
        return failures.failures == Int64(self.settings.loginFailureThreshold)
    }

    func loginSucceeded(email: String) async throws {
        guard self.settings.enabled else { return }
        try await self.store.clearLoginFailures(key: Self.loginKey(email))
    }

    /// How long a count of failures keeps the account throttled from `now` (nil: not throttled).
    func throttle(_ failures: LoginFailures, at now: Date) -> TimeInterval? {
        let over = failures.failures - Int64(self.settings.loginFailureThreshold)
        guard over >= 0 else { return nil }
        let delay = min(self.settings.loginBaseDelay * pow(2, Double(min(over, 30))), self.settings.loginMaximumDelay)
        let wait = failures.lastFailureAt.addingTimeInterval(delay).timeIntervalSince(now)
        return wait > 0 ? wait : nil
    }

    private static func loginKey(_ email: String) -> String { "login:\(email)" }
}

/// Applies the per-address limit of a group of unauthenticated routes.
struct AddressRateLimitMiddleware: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let limiter: RateLimiter
    let group: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        try await self.limiter.checkAddress(self.group, client: context.client)
        return try await next(request, context)
    }
}
