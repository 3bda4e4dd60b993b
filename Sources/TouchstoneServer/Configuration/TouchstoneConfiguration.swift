import Foundation
public import Logging
public import TouchstoneCrypto
public import TouchstoneWebAuthn
public import X509
import TouchstoneStore

/// Which registrations a newly enrolled device supersedes.
public enum DevicePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// One active registration per (user, device); enrolling a device again replaces its previous registration.
    case multiDevice
    /// One active registration per user; enrolling a device replaces every other device of the user.
    case singleDevice
}

/// Where data is stored.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// SQLite in a file (created if missing): the embedded default, for one instance.
    case sqliteFile(path: String)
    /// SQLite in memory: for tests and demos; everything is lost when the process ends.
    case sqliteMemory
    /// PostgreSQL, shared by any number of instances:
    /// `postgres://user:password@host:5432/db?sslmode=require&pool=20&schema=touchstone`.
    case postgres(url: String)

    /// Parses `sqlite:PATH`, `sqlite::memory:`, a bare path ending in `.sqlite`/`.db`, or `postgres://...`.
    public init?(url: String) {
        if url == "sqlite::memory:" || url == ":memory:" {
            self = .sqliteMemory
        } else if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            self = .postgres(url: url)
        } else if url.hasPrefix("sqlite://") {
            let path = String(url.dropFirst("sqlite://".count))
            guard !path.isEmpty else { return nil }
            self = .sqliteFile(path: path)
        } else if url.hasPrefix("sqlite:") {
            let path = String(url.dropFirst("sqlite:".count))
            guard !path.isEmpty else { return nil }
            self = .sqliteFile(path: path)
        } else if url.hasSuffix(".sqlite") || url.hasSuffix(".db") {
            self = .sqliteFile(path: url)
        } else {
            return nil
        }
    }

    /// The location for logs: a PostgreSQL password is masked.
    public var description: String {
        switch self {
        case .sqliteFile(let path): return "sqlite:\(path)"
        case .sqliteMemory: return "sqlite::memory:"
        case .postgres(let url):
            guard var components = URLComponents(string: url) else { return "postgres://…" }
            if components.password != nil { components.password = "***" }
            return components.string ?? "postgres://…"
        }
    }
}

/// Everything that configures a Touchstone server, with safe defaults.
///
/// ``init(environment:)`` reads `TOUCHSTONE_*` variables; the CLI applies its options on top.
public struct TouchstoneConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var database: DatabaseLocation = .sqliteFile(path: "touchstone.sqlite")
    /// Whether `buildApplication` brings the schema up to date before serving (`touchstone migrate` does it explicitly).
    public var migrateOnStart: Bool = true
    /// Whether clients may offer biometric login at all.
    public var biometricsEnabled: Bool = true
    public var devicePolicy: DevicePolicy = .multiDevice
    /// Algorithms accepted for new registrations.
    public var algorithms: [SignatureAlgorithm] = SignatureAlgorithm.allCases
    /// How long a challenge can be answered.
    public var challengeTTL: Duration = .seconds(120)
    /// Absolute session lifetime (a login may ask for less).
    public var sessionLifetime: Duration = .seconds(30 * 24 * 3600)
    /// A session unused for this long ends.
    public var sessionIdleTimeout: Duration = .seconds(15 * 60)
    /// Privileged operations need a strong proof (password, passkey with user verification, device key) this recent
    /// (`TOUCHSTONE_REAUTH_SECONDS`).
    public var reauthenticationWindow: Duration = .seconds(10 * 60)
    /// How long SIGTERM waits for requests and background work in flight (a mail being handed to SMTP, a push, a
    /// webhook) before they are cancelled (`TOUCHSTONE_SHUTDOWN_GRACE_SECONDS`, 1–300, default 10). Work cut short is
    /// done after the restart, from its record.
    public var shutdownGrace: Duration = .seconds(10)
    /// bcrypt cost factor for password hashes (4...31).
    public var bcryptCost: UInt8 = 12
    /// Largest request body accepted.
    public var maxRequestBodySize: Int = 64 * 1024
    /// How often expired challenges, sessions and abandoned registrations are deleted.
    public var purgeInterval: Duration = .seconds(300)
    /// How long audit events are kept (`nil`: forever). The purge service deletes older ones.
    public var auditRetention: Duration? = nil
    public var logLevel: Logger.Level = .info
    /// `text` (swift-log's lines) or `json` (one object per line) (`TOUCHSTONE_LOG_FORMAT`).
    public var logFormat: LogFormat = .text
    /// Where `GET /metrics` is served instead of the main port, `host:port` (`TOUCHSTONE_METRICS_ADDRESS`); nil serves
    /// it on the main port.
    public var metricsAddress: MetricsAddress?
    /// OTLP tracing (`TOUCHSTONE_OTLP_ENDPOINT`...); off by default.
    public var tracing = TracingSettings()
    /// SQLite only: at most this many operations share one commit (group commit; 1 commits each on its own).
    public var sqliteCommitBatch: Int = SQLiteExecutor.defaultCommitBatch
    /// Consecutive failed signatures after which a registration is locked.
    public var lockoutThreshold: Int = 5
    /// Wrong PINs that disable a registration's app PIN until the next password sign-in.
    public var pinMaxAttempts: Int = 3
    /// Rate limits, password throttling and the proxies whose `X-Forwarded-For` is trusted.
    public var rateLimits = RateLimitSettings()
    /// How often each instance reloads the runtime policy an operator may have changed through another instance.
    public var policyRefreshInterval: Duration = .seconds(10)
    /// Parsed device public keys kept in memory, and as many biometric registrations' user and key for their sign-ins'
    /// finish (0 parses the stored key on every sign-in and reads the registration before every finish).
    public var keyCacheSize: Int = 10_000
    /// The WebAuthn relying party for passkeys.
    public var passkeys = PasskeySettings()
    /// Apple App Attest: which apps may attest keys, and whether enrolment requires it.
    public var appAttest = AppAttestSettings()
    /// Android Keystore key attestation of enrolled device keys (the apps are ``PasskeySettings/androidApps``).
    public var androidKeyAttestation = AndroidKeyAttestationSettings()
    /// Access tokens and the signing key set.
    public var tokens = TokenSettings()
    /// Authenticator metadata (FIDO Metadata Service) for passkey registrations.
    public var metadata = AuthenticatorMetadataSettings()
    /// Webhook destinations and delivery.
    public var webhooks = WebhookSettings()
    /// How mail is sent (SMTP or `.eml` files) and the links in it.
    public var mail = MailSettings()
    /// Who may create accounts (`TOUCHSTONE_SIGN_UP`).
    public var accounts = AccountSettings()
    /// Verified addresses, password resets, sign-in codes and recovery codes.
    public var recovery = RecoverySettings()
    /// Sign-ins approved on a phone: request lifetime, "not me" pauses, Apple push.
    public var phoneApproval = PhoneApprovalSettings()
    /// DPoP proofs (`TOUCHSTONE_DPOP_*`).
    public var dpop = DPoPSettings()

    public init() {}

    /// Reads `TOUCHSTONE_HOST`, `TOUCHSTONE_PORT`, `TOUCHSTONE_DATABASE_URL`, `TOUCHSTONE_BIOMETRICS_ENABLED`,
    /// `TOUCHSTONE_DEVICE_POLICY`, `TOUCHSTONE_ALGORITHMS` (comma-separated), `TOUCHSTONE_CHALLENGE_TTL_SECONDS`,
    /// `TOUCHSTONE_REAUTH_SECONDS`, `TOUCHSTONE_SHUTDOWN_GRACE_SECONDS`,
    /// `TOUCHSTONE_SESSION_LIFETIME_MINUTES`, `TOUCHSTONE_SESSION_IDLE_MINUTES`, `TOUCHSTONE_BCRYPT_COST`,
    /// `TOUCHSTONE_LOG_LEVEL`, `TOUCHSTONE_SQLITE_COMMIT_BATCH` and `TOUCHSTONE_KEY_CACHE_SIZE` over the defaults.
    ///
    /// - Throws: ``ConfigurationError`` naming the first variable with an unusable value.
    public init(environment: [String: String]) throws {
        self.init()
        if let host = environment["TOUCHSTONE_HOST"] { self.host = host }
        if let port = environment["TOUCHSTONE_PORT"] {
            guard let value = Int(port), (0...65535).contains(value) else { throw ConfigurationError("TOUCHSTONE_PORT", port) }
            self.port = value
        }
        if let url = environment["TOUCHSTONE_DATABASE_URL"] {
            guard let location = DatabaseLocation(url: url) else { throw ConfigurationError("TOUCHSTONE_DATABASE_URL", url) }
            self.database = location
        }
        if let enabled = environment["TOUCHSTONE_BIOMETRICS_ENABLED"] {
            guard let value = Bool(enabled.lowercased()) else {
                throw ConfigurationError("TOUCHSTONE_BIOMETRICS_ENABLED", enabled)
            }
            self.biometricsEnabled = value
        }
        if let policy = environment["TOUCHSTONE_DEVICE_POLICY"] {
            guard let value = DevicePolicy(rawValue: policy) else { throw ConfigurationError("TOUCHSTONE_DEVICE_POLICY", policy) }
            self.devicePolicy = value
        }
        if let list = environment["TOUCHSTONE_ALGORITHMS"] {
            let values = list.split(separator: ",").map { SignatureAlgorithm(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
            guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { throw ConfigurationError("TOUCHSTONE_ALGORITHMS", list) }
            self.algorithms = values.compactMap { $0 }
        }
        if let ttl = environment["TOUCHSTONE_CHALLENGE_TTL_SECONDS"] {
            guard let value = Int(ttl), value > 0 else { throw ConfigurationError("TOUCHSTONE_CHALLENGE_TTL_SECONDS", ttl) }
            self.challengeTTL = .seconds(value)
        }
        if let seconds = environment["TOUCHSTONE_SHUTDOWN_GRACE_SECONDS"] {
            guard let value = Int(seconds), (1...300).contains(value) else { throw ConfigurationError("TOUCHSTONE_SHUTDOWN_GRACE_SECONDS", seconds) }
            self.shutdownGrace = .seconds(value)
        }
        if let seconds = environment["TOUCHSTONE_REAUTH_SECONDS"] {
            // At least a minute (a user must have time to act after proving who they are), at most a day.
            guard let value = Int(seconds), (60...86_400).contains(value) else { throw ConfigurationError("TOUCHSTONE_REAUTH_SECONDS", seconds) }
            self.reauthenticationWindow = .seconds(value)
        }
        if let minutes = environment["TOUCHSTONE_SESSION_LIFETIME_MINUTES"] {
            guard let value = Int(minutes), value > 0 else {
                throw ConfigurationError("TOUCHSTONE_SESSION_LIFETIME_MINUTES", minutes)
            }
            self.sessionLifetime = .seconds(value * 60)
        }
        if let minutes = environment["TOUCHSTONE_SESSION_IDLE_MINUTES"] {
            guard let value = Int(minutes), value > 0 else { throw ConfigurationError("TOUCHSTONE_SESSION_IDLE_MINUTES", minutes) }
            self.sessionIdleTimeout = .seconds(value * 60)
        }
        if let cost = environment["TOUCHSTONE_BCRYPT_COST"] {
            guard let value = UInt8(cost), (4...31).contains(value) else { throw ConfigurationError("TOUCHSTONE_BCRYPT_COST", cost) }
            self.bcryptCost = value
        }
        if let value = environment["TOUCHSTONE_SQLITE_COMMIT_BATCH"] {
            guard let batch = Int(value), (1...1024).contains(batch) else { throw ConfigurationError("TOUCHSTONE_SQLITE_COMMIT_BATCH", value) }
            self.sqliteCommitBatch = batch
        }
        if let value = environment["TOUCHSTONE_LOCKOUT_THRESHOLD"] {
            guard let threshold = Int(value), (1...100).contains(threshold) else { throw ConfigurationError("TOUCHSTONE_LOCKOUT_THRESHOLD", value) }
            self.lockoutThreshold = threshold
        }
        if let value = environment["TOUCHSTONE_AUDIT_RETENTION_DAYS"] {
            guard let days = Int(value), (0...36_500).contains(days) else { throw ConfigurationError("TOUCHSTONE_AUDIT_RETENTION_DAYS", value) }
            self.auditRetention = days == 0 ? nil : .seconds(days * 86_400)
        }
        if let value = environment["TOUCHSTONE_PIN_MAX_ATTEMPTS"] {
            guard let attempts = Int(value), (1...10).contains(attempts) else { throw ConfigurationError("TOUCHSTONE_PIN_MAX_ATTEMPTS", value) }
            self.pinMaxAttempts = attempts
        }
        try self.rateLimits.read(environment)
        if let value = environment["TOUCHSTONE_KEY_CACHE_SIZE"] {
            guard let size = Int(value), (0...10_000_000).contains(size) else { throw ConfigurationError("TOUCHSTONE_KEY_CACHE_SIZE", value) }
            self.keyCacheSize = size
        }
        try self.appAttest.read(environment)
        try self.androidKeyAttestation.read(environment)
        try self.passkeys.read(environment)
        try self.metadata.read(environment)
        if self.metadata.requireCertified {
            guard self.metadata.file != nil || self.metadata.url != nil else {
                throw ConfigurationError("TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS", "true without TOUCHSTONE_MDS_FILE or TOUCHSTONE_MDS_URL")
            }
            guard ["direct", "enterprise"].contains(self.passkeys.attestation) else {
                throw ConfigurationError("TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS", "true with TOUCHSTONE_ATTESTATION=\(self.passkeys.attestation) (needs direct)")
            }
        }
        if self.androidKeyAttestation.required && self.passkeys.androidApps.isEmpty {
            throw ConfigurationError("TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION", "true without TOUCHSTONE_ANDROID_APPS")
        }
        try self.tokens.read(environment)
        try self.webhooks.read(environment)
        try self.mail.read(environment)
        try self.accounts.read(environment)
        try self.recovery.read(environment)
        try self.phoneApproval.read(environment)
        try self.dpop.read(environment)
        if let value = environment["TOUCHSTONE_LOG_FORMAT"] {
            guard let format = LogFormat(rawValue: value) else { throw ConfigurationError("TOUCHSTONE_LOG_FORMAT", value) }
            self.logFormat = format
        }
        if let value = environment["TOUCHSTONE_METRICS_ADDRESS"], !value.isEmpty {
            guard let address = MetricsAddress(value) else { throw ConfigurationError("TOUCHSTONE_METRICS_ADDRESS", value) }
            self.metricsAddress = address
        }
        if let value = environment["TOUCHSTONE_OTLP_ENDPOINT"], !value.isEmpty {
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigurationError("TOUCHSTONE_OTLP_ENDPOINT", value)
            }
            self.tracing.otlpEndpoint = value
        }
        if let value = environment["TOUCHSTONE_OTLP_PROTOCOL"] {
            guard ["http/protobuf", "http/json"].contains(value) else { throw ConfigurationError("TOUCHSTONE_OTLP_PROTOCOL", value) }
            self.tracing.protocolName = value
        }
        if let value = environment["TOUCHSTONE_TRACE_SAMPLE_RATIO"] {
            guard let ratio = Double(value), (0...1).contains(ratio) else { throw ConfigurationError("TOUCHSTONE_TRACE_SAMPLE_RATIO", value) }
            self.tracing.sampleRatio = ratio
        }
        if let level = environment["TOUCHSTONE_LOG_LEVEL"] {
            guard let value = Logger.Level(rawValue: level) else { throw ConfigurationError("TOUCHSTONE_LOG_LEVEL", level) }
            self.logLevel = value
        }
    }
}

extension TouchstoneConfiguration {
    /// `https://host[:port]` (or `http://localhost[:port]` for development): a web origin, with no path, query or
    /// fragment.
    static func isWebOrigin(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty,
            components.path.isEmpty, components.query == nil, components.fragment == nil, components.user == nil
        else {
            return false
        }
        switch components.scheme {
        case "https": return true
        case "http": return host == "localhost"
        default: return false
        }
    }
}

/// A configuration value that cannot be used.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let setting: String
    public let value: String

    init(_ setting: String, _ value: String) {
        self.setting = setting
        self.value = value
    }

    public var description: String { "invalid value '\(self.value)' for \(self.setting)" }
}

extension Duration {
    /// The duration in (fractional) seconds, for date arithmetic.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = self.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// A separate listener for `GET /metrics`: `host:port` (`127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`).
public struct MetricsAddress: Sendable, Hashable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) else { return nil }
        self.init(host: host, port: port)
    }
}
