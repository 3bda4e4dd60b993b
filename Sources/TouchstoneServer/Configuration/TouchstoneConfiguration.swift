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
    /// Privileged operations (adding a device) need a password authentication this recent.
    public var reauthenticationWindow: Duration = .seconds(10 * 60)
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

    public init() {}

    /// Reads `TOUCHSTONE_HOST`, `TOUCHSTONE_PORT`, `TOUCHSTONE_DATABASE_URL`, `TOUCHSTONE_BIOMETRICS_ENABLED`,
    /// `TOUCHSTONE_DEVICE_POLICY`, `TOUCHSTONE_ALGORITHMS` (comma-separated), `TOUCHSTONE_CHALLENGE_TTL_SECONDS`,
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
        if let value = environment["TOUCHSTONE_RATE_LIMITS"] {
            switch value.lowercased() {
            case "on", "true": self.rateLimits.enabled = true
            case "off", "false": self.rateLimits.enabled = false
            default: throw ConfigurationError("TOUCHSTONE_RATE_LIMITS", value)
            }
        }
        if let value = environment["TOUCHSTONE_RATE_LIMIT_PER_ADDRESS"] {
            guard let limit = RateLimit(value) else { throw ConfigurationError("TOUCHSTONE_RATE_LIMIT_PER_ADDRESS", value) }
            self.rateLimits.perAddress = limit
        }
        if let value = environment["TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT"] {
            guard let limit = RateLimit(value) else { throw ConfigurationError("TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT", value) }
            self.rateLimits.perAccount = limit
        }
        if let value = environment["TOUCHSTONE_LOGIN_FAILURE_THRESHOLD"] {
            guard let threshold = Int(value), (1...1000).contains(threshold) else {
                throw ConfigurationError("TOUCHSTONE_LOGIN_FAILURE_THRESHOLD", value)
            }
            self.rateLimits.loginFailureThreshold = threshold
        }
        if let value = environment["TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS"] {
            guard let limit = FailureLimit(value) else { throw ConfigurationError("TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS", value) }
            self.rateLimits.failedCredentialsPerAddress = limit
        }
        if let list = environment["TOUCHSTONE_TRUSTED_PROXIES"] {
            self.rateLimits.trustedProxies = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        if let value = environment["TOUCHSTONE_KEY_CACHE_SIZE"] {
            guard let size = Int(value), (0...10_000_000).contains(size) else { throw ConfigurationError("TOUCHSTONE_KEY_CACHE_SIZE", value) }
            self.keyCacheSize = size
        }
        if let list = environment["TOUCHSTONE_APP_ATTEST_APP_IDS"] {
            self.appAttest.appIds = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let value = environment["TOUCHSTONE_APP_ATTEST_ENVIRONMENT"] {
            guard let parsed = AppAttestVerifier.Environment(rawValue: value) else {
                throw ConfigurationError("TOUCHSTONE_APP_ATTEST_ENVIRONMENT", value)
            }
            self.appAttest.environment = parsed
        }
        if let value = environment["TOUCHSTONE_REQUIRE_APP_ATTEST"] {
            guard let required = Bool(value) else { throw ConfigurationError("TOUCHSTONE_REQUIRE_APP_ATTEST", value) }
            self.appAttest.required = required
        }
        if self.appAttest.required && self.appAttest.appIds.isEmpty {
            throw ConfigurationError("TOUCHSTONE_REQUIRE_APP_ATTEST", "true without TOUCHSTONE_APP_ATTEST_APP_IDS")
        }
        if let value = environment["TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION"] {
            guard let required = Bool(value) else { throw ConfigurationError("TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION", value) }
            self.androidKeyAttestation.required = required
        }
        if let path = environment["TOUCHSTONE_ANDROID_ATTESTATION_ROOTS"], !path.isEmpty {
            self.androidKeyAttestation.rootsFile = path
        }
        if let path = environment["TOUCHSTONE_ANDROID_ATTESTATION_STATUS_FILE"], !path.isEmpty {
            self.androidKeyAttestation.statusFile = path
        }
        if let rpId = environment["TOUCHSTONE_RP_ID"] { self.passkeys.rpId = rpId }
        if let rpName = environment["TOUCHSTONE_RP_NAME"] { self.passkeys.rpName = rpName }
        if let origins = environment["TOUCHSTONE_ORIGINS"] {
            self.passkeys.origins = origins.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let list = environment["TOUCHSTONE_RELATED_ORIGINS"] {
            let origins = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard origins.count <= 100, origins.allSatisfy(Self.isWebOrigin) else { throw ConfigurationError("TOUCHSTONE_RELATED_ORIGINS", list) }
            self.passkeys.relatedOrigins = origins
        }
        if let list = environment["TOUCHSTONE_PASSKEY_HINTS"] {
            let hints = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard (try? PasskeyHint.parse(hints, field: "hints")) != nil else { throw ConfigurationError("TOUCHSTONE_PASSKEY_HINTS", list) }
            self.passkeys.hints = hints
        }
        if let list = environment["TOUCHSTONE_APPLE_APP_IDS"] {
            let ids = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard ids.allSatisfy(AndroidApp.isAppleAppId) else { throw ConfigurationError("TOUCHSTONE_APPLE_APP_IDS", list) }
            self.passkeys.appleAppIds = ids
        }
        if let list = environment["TOUCHSTONE_ANDROID_APPS"] {
            let entries = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let apps = entries.map(AndroidApp.init(parsing:))
            guard apps.allSatisfy({ $0 != nil }) else { throw ConfigurationError("TOUCHSTONE_ANDROID_APPS", list) }
            self.passkeys.androidApps = apps.compactMap { $0 }
        }
        if let value = environment["TOUCHSTONE_USER_VERIFICATION"] {
            guard let requirement = UserVerificationRequirement(rawValue: value) else {
                throw ConfigurationError("TOUCHSTONE_USER_VERIFICATION", value)
            }
            self.passkeys.userVerification = requirement
        }
        if let value = environment["TOUCHSTONE_ATTESTATION"] {
            guard ["none", "indirect", "direct", "enterprise"].contains(value) else { throw ConfigurationError("TOUCHSTONE_ATTESTATION", value) }
            self.passkeys.attestation = value
        }
        if let value = environment["TOUCHSTONE_MINIMUM_ATTESTATION"] {
            guard let type = AttestationType(rawValue: value) else { throw ConfigurationError("TOUCHSTONE_MINIMUM_ATTESTATION", value) }
            self.passkeys.minimumAttestation = type
        }
        if let list = environment["TOUCHSTONE_PASSKEY_ALGORITHMS"] {
            let names = Dictionary(uniqueKeysWithValues: COSEAlgorithm.allCases.map { ($0.name, $0) })
            let values = list.split(separator: ",").map { names[$0.trimmingCharacters(in: .whitespaces)] }
            guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { throw ConfigurationError("TOUCHSTONE_PASSKEY_ALGORITHMS", list) }
            self.passkeys.algorithms = values.compactMap { $0 }
        }
        if let value = environment["TOUCHSTONE_REJECT_COUNTER_REGRESSION"] {
            guard let flag = Bool(value.lowercased()) else { throw ConfigurationError("TOUCHSTONE_REJECT_COUNTER_REGRESSION", value) }
            self.passkeys.rejectCounterRegression = flag
        }
        if let value = environment["TOUCHSTONE_ALLOW_CROSS_ORIGIN"] {
            guard let flag = Bool(value.lowercased()) else { throw ConfigurationError("TOUCHSTONE_ALLOW_CROSS_ORIGIN", value) }
            self.passkeys.allowCrossOrigin = flag
        }
        if let list = environment["TOUCHSTONE_TOP_ORIGINS"] {
            self.passkeys.allowedTopOrigins = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if let files = environment["TOUCHSTONE_TRUST_ANCHORS"] {
            self.passkeys.trustAnchorFiles = files.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
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

/// The WebAuthn relying party: who the passkeys are for and what is accepted.
public struct AppAttestSettings: Sendable {
    /// App IDs (`TEAMID.bundle.identifier`) whose keys are accepted; empty turns App Attest off.
    public var appIds: [String] = []
    public var environment: AppAttestVerifier.Environment = .production
    /// Whether `registrations/start` requires an App Attest assertion (`requireAppAttest`).
    public var required = false
    /// Roots for the credential certificates: Apple's App Attestation Root CA (tests use their own).
    public var trustAnchors: [Certificate] = AppAttestVerifier.appleRoots

    public init() {}
}

/// Android Keystore key attestation: an enrolment may carry (or must, when required) the attestation chain of its key.
public struct AndroidKeyAttestationSettings: Sendable {
    /// Whether `registrations/start` requires `keyAttestation` (`TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION`).
    public var required = false
    /// Roots the chains must lead to: Google's hardware attestation roots.
    public var trustAnchors: [Certificate] = AndroidKeyAttestationVerifier.googleRoots
    /// A PEM file whose roots replace Google's (`TOUCHSTONE_ANDROID_ATTESTATION_ROOTS`): for tests and private
    /// device fleets, never needed for phones from a store.
    public var rootsFile: String?
    /// A copy of Google's attestation status list (`TOUCHSTONE_ANDROID_ATTESTATION_STATUS_FILE`), re-read when it
    /// changes; enrolments fail with 503 while it cannot be read.
    public var statusFile: String?

    public init() {}
}

/// Authenticator metadata from the FIDO Metadata Service (MDS3).
public struct AuthenticatorMetadataSettings: Sendable {
    /// A BLOB file (`TOUCHSTONE_MDS_FILE`), read again when it changes: for servers that cannot reach the FIDO
    /// Alliance and get the BLOB by other means.
    public var file: String?
    /// The BLOB's URL (`TOUCHSTONE_MDS_URL`, e.g. `https://mds3.fidoalliance.org/`): fetched when due.
    public var url: String?
    /// Roots the BLOB's signing chain must reach: the FIDO Alliance's (GlobalSign Root CA - R3), or those of a PEM
    /// file (`TOUCHSTONE_MDS_ROOTS`, for a private metadata service and for tests).
    public var roots: [Certificate] = MetadataBLOB.fidoRoots
    /// Status reports that refuse a registration (`TOUCHSTONE_MDS_REFUSED_STATUSES`, comma-separated, or `none`).
    public var refusedStatuses: Set<AuthenticatorStatus> = AuthenticatorStatus.compromised
    /// Accept only FIDO-certified authenticators with attestation to their metadata roots
    /// (`TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS`).
    public var requireCertified = false
    /// How often each instance looks for a BLOB stored by another, and checks whether its source is due.
    public var checkInterval: Duration = .seconds(300)
    /// How long after a failed or fruitless fetch the source is tried again (`TOUCHSTONE_MDS_RETRY_SECONDS`).
    public var retryInterval: Duration = .seconds(3600)

    /// The statuses `TOUCHSTONE_MDS_REFUSED_STATUSES` may name (FIDO Metadata Service v3.1 §3.1.4).
    static let knownStatuses: Set<String> = [
        "NOT_FIDO_CERTIFIED", "FIDO_CERTIFIED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE",
        "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE", "UPDATE_AVAILABLE", "REVOKED", "SELF_ASSERTION_SUBMITTED",
        "FIDO_CERTIFIED_L1", "FIDO_CERTIFIED_L1plus", "FIDO_CERTIFIED_L2", "FIDO_CERTIFIED_L2plus", "FIDO_CERTIFIED_L3",
        "FIDO_CERTIFIED_L3plus",
    ]

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        if let path = environment["TOUCHSTONE_MDS_FILE"], !path.isEmpty { self.file = path }
        if let url = environment["TOUCHSTONE_MDS_URL"], !url.isEmpty {
            guard let parsed = URL(string: url), let host = parsed.host, !host.isEmpty,
                parsed.scheme == "https" || (parsed.scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(host))
            else {
                throw ConfigurationError("TOUCHSTONE_MDS_URL", url)
            }
            self.url = url
        }
        if self.file != nil && self.url != nil {
            throw ConfigurationError("TOUCHSTONE_MDS_URL", "set with TOUCHSTONE_MDS_FILE (choose one source)")
        }
        if let path = environment["TOUCHSTONE_MDS_ROOTS"], !path.isEmpty {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8), let roots = RelyingParty.trustAnchors(pem: text) else {
                throw ConfigurationError("TOUCHSTONE_MDS_ROOTS", path)
            }
            self.roots = roots
        }
        if let list = environment["TOUCHSTONE_MDS_REFUSED_STATUSES"] {
            if list.trimmingCharacters(in: .whitespaces) == "none" {
                self.refusedStatuses = []
            } else {
                let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard !names.isEmpty, names.allSatisfy(Self.knownStatuses.contains) else {
                    throw ConfigurationError("TOUCHSTONE_MDS_REFUSED_STATUSES", list)
                }
                self.refusedStatuses = Set(names.map(AuthenticatorStatus.init(rawValue:)))
            }
        }
        if let value = environment["TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS"] {
            guard let flag = Bool(value.lowercased()) else { throw ConfigurationError("TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS", value) }
            self.requireCertified = flag
        }
        if let value = environment["TOUCHSTONE_MDS_RETRY_SECONDS"] {
            guard let seconds = Int(value), (60...86_400).contains(seconds) else { throw ConfigurationError("TOUCHSTONE_MDS_RETRY_SECONDS", value) }
            self.retryInterval = .seconds(seconds)
        }
    }
}

public struct PasskeySettings: Sendable {
    /// The RP ID: the site's registrable domain (`example.com`); `localhost` for local development.
    public var rpId: String = "localhost"
    /// Shown by browsers and password managers.
    public var rpName: String = "Touchstone"
    /// Origins allowed in clientDataJSON; empty means `http://localhost:<port>` (development only). The
    /// `android:apk-key-hash:` origins of ``androidApps`` are added to these.
    public var origins: [String] = []
    /// Other sites that share this relying party's passkeys (WebAuthn Level 3 Related Origin Requests): served in
    /// `/.well-known/webauthn` and accepted in clientDataJSON like ``origins``.
    public var relatedOrigins: [String] = []
    /// Apps that may use the relying party's passkeys on iOS and macOS (`TEAMID.bundle.identifier`): served in
    /// `/.well-known/apple-app-site-association` as `webcredentials`.
    public var appleAppIds: [String] = []
    /// Android apps that may use them: served in `/.well-known/assetlinks.json`, and their signing certificates'
    /// `android:apk-key-hash:` origins are accepted.
    public var androidApps: [AndroidApp] = []
    /// Allow ceremonies inside cross-origin iframes (and from these top-level origins, if any are listed).
    public var allowCrossOrigin: Bool = false
    public var allowedTopOrigins: [String] = []
    public var userVerification: UserVerificationRequirement = .preferred
    /// Attestation conveyance asked of browsers: `none`, `indirect`, `direct` or `enterprise`.
    public var attestation: String = "none"
    /// The weakest attestation accepted (`none`, `self`, `basic`...); `basic` or stronger needs trust anchors.
    public var minimumAttestation: AttestationType = .none
    /// PEM files of attestation roots.
    public var trustAnchorFiles: [String] = []
    public var algorithms: [COSEAlgorithm] = COSEAlgorithm.recommended
    /// Refuse assertions whose signature counter did not increase (otherwise they are accepted and counted as clone
    /// warnings).
    public var rejectCounterRegression: Bool = false
    /// `hints` of the ceremony options when a request names none (`TOUCHSTONE_PASSKEY_HINTS`: `security-key`,
    /// `client-device`, `hybrid`, most preferred first).
    public var hints: [String] = []
    /// How long a passkey ceremony may take (the browser's `timeout` and the challenge lifetime).
    public var timeout: Duration = .seconds(300)

    public init() {}
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

/// An Android app allowed to use the relying party's passkeys: its package and the SHA-256 fingerprint of its signing
/// certificate (32 bytes).
public struct AndroidApp: Sendable, Hashable {
    public var packageName: String
    public var certificateSHA256: [UInt8]

    public init(packageName: String, certificateSHA256: [UInt8]) {
        self.packageName = packageName
        self.certificateSHA256 = certificateSHA256
    }

    /// `com.example.app:14:6D:E9:...` (the package, a colon, and the fingerprint as `keytool -list -v` prints it, or as
    /// 64 hex digits).
    public init?(parsing text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let package = String(text[..<colon])
        let hex = text[text.index(after: colon)...].filter { $0 != ":" }
        guard Self.isPackageName(package), hex.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(packageName: package, certificateSHA256: bytes)
    }

    /// The fingerprint as assetlinks.json writes it: uppercase hex pairs separated by colons.
    public var fingerprint: String {
        self.certificateSHA256.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }

    /// The origin Android reports in clientDataJSON for this app: `android:apk-key-hash:` and base64url of the
    /// certificate's SHA-256, unpadded.
    public var origin: String { "android:apk-key-hash:" + Base64.urlEncode(self.certificateSHA256) }

    static func isPackageName(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && parts.allSatisfy { part in
            guard let first = part.first, first.isASCII, first.isLetter else { return false }
            return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        }
    }

    /// `TEAMID.bundle.identifier`: a 10-character team id, then a bundle id.
    static func isAppleAppId(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else { return false }
        return parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") } && !parts[1].isEmpty
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
