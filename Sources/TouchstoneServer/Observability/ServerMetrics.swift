public import CoreMetrics
public import Foundation
public import Prometheus
import Synchronization
import TouchstoneStore

/// The server's metrics: swift-metrics instruments backed by a Prometheus registry of this application's own (no
/// global bootstrap, so several applications in one process keep separate numbers), scraped at `GET /metrics`.
///
/// Every label has a bounded set of values: route templates, methods, status codes, ceremony kinds, error codes,
/// audit event types. Never a user id, an email, an address or a token.
public final class ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics factory writing into ``registry`` (also handed to the store).
    public let factory: PrometheusMetricsFactory
    private let startedAt: Date

    /// Request and store latencies: 1 ms to 10 s.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    /// - Parameter dpopSignatureSampling: One DPoP signature check in this many is timed
    ///   (``checkDPoPSignature(_:)``).
    public init(version: String = TouchstoneBuild.version, now: Date = Date(), dpopSignatureSampling: Int = 16) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        factory.valueHistogramBuckets["touchstone_sqlite_commit_batch_size"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        factory.durationHistogramBuckets[Self.dpopSignatureCPU] = Self.signatureBuckets
        self.registry = registry
        self.factory = factory
        self.startedAt = now
        self.dpopSignatureSampling = max(1, dpopSignatureSampling)
        self.dpopSignatureTimer = Timer(label: Self.dpopSignatureCPU, factory: factory)
        Gauge(label: "touchstone_build_info", dimensions: [("version", version)], factory: factory).record(1)
    }

    // MARK: HTTP

    /// A request's instruments, by method, route template and status (a bounded set, as every label's).
    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    /// The instruments of the requests seen so far: looked up here instead of through the factory, which validates
    /// the names and labels and takes the registry's lock on every call (about 1 % of a sign-in's CPU).
    private let requestInstruments = Mutex<[RequestKey: (count: CoreMetrics.Counter, duration: CoreMetrics.Timer)]>([:])

    func request(method: String, route: String, status: Int, nanoseconds: UInt64) {
        let key = RequestKey(method: method, route: route, status: status)
        let instruments = self.requestInstruments.withLock { cache in
            if let known = cache[key] { return known }
            let made = (
                count: Counter(
                    label: "touchstone_http_requests_total",
                    dimensions: [("method", method), ("route", route), ("status", String(status))],
                    factory: self.factory
                ),
                duration: Timer(
                    label: "touchstone_http_request_duration_seconds",
                    dimensions: [("method", method), ("route", route)],
                    factory: self.factory
                )
            )
            cache[key] = made
            return made
        }
        instruments.count.increment()
        instruments.duration.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    // MARK: Ceremonies

    /// Sign-ins and enrolments, by how they are made.
    enum Ceremony: String, CaseIterable {
        case password, biometric, pin, passkey
        case biometricEnrolment = "biometric_enrolment"
        case passkeyRegistration = "passkey_registration"
        case confirmation
    }

    /// A ceremony that takes a challenge began (the ones that take none, password and PIN, only finish).
    func started(_ ceremony: Ceremony) {
        Counter(label: "touchstone_ceremonies_started_total", dimensions: [("kind", ceremony.rawValue)], factory: self.factory).increment()
    }

    /// Counts a stored audit event: every event by type and outcome, the ceremonies it ends, and the incidents
    /// operators watch (lockouts, PIN disables, clone warnings).
    func observe(_ event: AuditEventRecord) {
        Counter(
            label: "touchstone_audit_events_total",
            dimensions: [("type", event.type), ("outcome", event.outcome)],
            factory: self.factory
        ).increment()
        guard let type = AuditEventType(rawValue: event.type) else { return }
        if let ceremony = Self.ceremony(type) {
            var outcome = event.outcome
            if type == .confirmationDeclined { outcome = "declined" }
            let code = event.outcome == AuditOutcome.failure.rawValue ? Self.boundedCode(event.reason) : ""
            Counter(
                label: "touchstone_ceremonies_total",
                dimensions: [("kind", ceremony.rawValue), ("outcome", outcome), ("code", code)],
                factory: self.factory
            ).increment()
        }
        switch type {
        case .registrationLocked:
            Counter(label: "touchstone_lockouts_total", dimensions: [("kind", "registration")], factory: self.factory).increment()
        case .passkeyLocked:
            Counter(label: "touchstone_lockouts_total", dimensions: [("kind", "passkey")], factory: self.factory).increment()
        case .pinDisabled:
            Counter(label: "touchstone_pin_disabled_total", factory: self.factory).increment()
        case .cloneWarning:
            Counter(label: "touchstone_passkey_clone_warnings_total", factory: self.factory).increment()
        case .passkeyBackupEligibilityChanged:
            Counter(
                label: "touchstone_passkey_backup_eligibility_changes_total",
                dimensions: [("direction", event.reason == "now_backup_eligible" ? "gained" : "lost")],
                factory: self.factory
            ).increment()
        default:
            break
        }
    }

    static func ceremony(_ type: AuditEventType) -> Ceremony? {
        switch type {
        case .passwordLogin: .password
        case .biometricLogin: .biometric
        case .pinLogin: .pin
        case .passkeyLogin: .passkey
        case .registrationFinished: .biometricEnrolment
        case .passkeyAdded: .passkeyRegistration
        case .confirmationApproved, .confirmationDeclined, .confirmationFailed: .confirmation
        default: nil
        }
    }

    /// An error code as a label value: the codes are `snake_case` constants of the server; anything else (a free-text
    /// reason) becomes `other`, so the label set stays bounded.
    static func boundedCode(_ reason: String?) -> String {
        // A reason may carry a detail after "; " (a confirmation failure's payload hash): the code is what precedes.
        guard let reason = reason?.split(separator: ";", maxSplits: 1).first.map(String.init), (1...48).contains(reason.utf8.count),
            reason.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || ($0 >= 0x30 && $0 <= 0x39) })
        else {
            return "other"
        }
        return reason
    }

    // MARK: DPoP

    static let dpopSignatureCPU = "touchstone_dpop_signature_cpu_seconds"
    /// A signature check's CPU: 10 µs to 5 ms.
    static let signatureBuckets: [Duration] = [
        .microseconds(10), .microseconds(20), .microseconds(30), .microseconds(40), .microseconds(50), .microseconds(75),
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(5),
    ]
    private let dpopSignatureSampling: Int
    private let dpopSignatureChecks = Atomic<Int>(0)
    private let dpopSignatureTimer: CoreMetrics.Timer

    /// Runs a DPoP proof's signature check, and records the CPU time of one in `dpopSignatureSampling` (16 by default)
    /// in `touchstone_dpop_signature_cpu_seconds`: what a verification costs inside this server, where caches are
    /// colder than in a benchmark's loop. The time is the thread's own CPU (not the wall clock, which would count a
    /// preemption), read twice on the timed checks only.
    func checkDPoPSignature(_ check: () -> Bool) -> Bool {
        guard self.dpopSignatureChecks.add(1, ordering: .relaxed).newValue % self.dpopSignatureSampling == 0 else { return check() }
        let start = threadCPUNanoseconds()
        let valid = check()
        self.dpopSignatureTimer.recordNanoseconds(Int64(clamping: threadCPUNanoseconds() &- start))
        return valid
    }

    // MARK: Limits and tokens

    /// A request refused by a rate limit or a throttle; `scope` is one of a few constants (`account`,
    /// `address:<endpoint group>`, `address:failed_credentials`, `login_throttle`).
    func rateLimited(scope: String) {
        Counter(label: "touchstone_rate_limited_total", dimensions: [("scope", scope)], factory: self.factory).increment()
    }

    func tokenIssued() {
        Counter(label: "touchstone_access_tokens_issued_total", factory: self.factory).increment()
    }

    func introspected(active: Bool) {
        Counter(label: "touchstone_token_introspections_total", dimensions: [("active", active ? "true" : "false")], factory: self.factory)
            .increment()
    }

    // MARK: Authenticator metadata

    /// A refresh of the metadata BLOB from its source: `success`, `unchanged` (no newer BLOB published yet),
    /// `refused` (an older one offered) or `failure`.
    func metadataRefresh(outcome: String) {
        Counter(label: "touchstone_mds_refreshes_total", dimensions: [("outcome", outcome)], factory: self.factory).increment()
    }

    /// The BLOB now in use.
    func metadataLoaded(number: Int, nextUpdate: Date) {
        Gauge(label: "touchstone_mds_blob_number", factory: self.factory).record(number)
        Gauge(label: "touchstone_mds_next_update_timestamp_seconds", factory: self.factory).record(nextUpdate.timeIntervalSince1970)
    }

    /// A webhook attempt ended: `delivered`, `retrying` (failed, tried again later) or `failed` (the round is over).
    func webhookAttempt(outcome: String) {
        Counter(label: "touchstone_webhook_deliveries_total", dimensions: [("outcome", outcome)], factory: self.factory).increment()
    }

    /// An endpoint the server disabled after failing for a whole retry round.
    func webhookEndpointDisabled() {
        Counter(label: "touchstone_webhook_endpoints_disabled_total", factory: self.factory).increment()
    }

    /// A mail attempt ended: `sent`, `retrying` (failed, tried again later) or `failed` (given up).
    func mailAttempt(outcome: String) {
        Counter(label: "touchstone_mail_deliveries_total", dimensions: [("outcome", outcome)], factory: self.factory).increment()
    }

    /// A push to a phone about a sign-in request (issue #34): `delivered`, `token_invalid` (forgotten), `refused`,
    /// `failed` (no answer).
    func pushed(_ outcome: String) {
        Counter(label: "touchstone_push_notifications_total", dimensions: [("outcome", outcome)], factory: self.factory).increment()
    }

    // MARK: Scrape

    /// The exposition text, with the process and database gauges read now.
    func scrape(store: any TouchstoneStore, now: Date) async -> [UInt8] {
        let available: Bool
        do {
            try await store.checkHealth()
            available = true
        } catch {
            available = false
        }
        Gauge(label: "touchstone_db_up", factory: self.factory).record(available ? 1 : 0)
        if available, let queue = try? await store.webhookQueueStatistics() {
            Gauge(label: "touchstone_webhook_queue_depth", factory: self.factory).record(queue.pending)
            let age = queue.oldestPendingAt.map { max(0, now.timeIntervalSince($0)) } ?? 0
            Gauge(label: "touchstone_webhook_oldest_pending_seconds", factory: self.factory).record(age)
        }
        if available, let queue = try? await store.mailQueueStatistics() {
            Gauge(label: "touchstone_mail_queue_depth", factory: self.factory).record(queue.pending)
            Gauge(label: "touchstone_mail_failed", factory: self.factory).record(queue.failed)
            let age = queue.oldestPendingAt.map { max(0, now.timeIntervalSince($0)) } ?? 0
            Gauge(label: "touchstone_mail_oldest_pending_seconds", factory: self.factory).record(age)
        }
        Gauge(label: "touchstone_uptime_seconds", factory: self.factory).record(max(0, now.timeIntervalSince(self.startedAt)))
        let process = ProcessStatistics.current()
        if let resident = process.residentBytes {
            Gauge(label: "touchstone_process_resident_memory_bytes", factory: self.factory).record(resident)
        }
        if let descriptors = process.openFileDescriptors {
            Gauge(label: "touchstone_process_open_fds", factory: self.factory).record(descriptors)
        }
        return Self.withHelp(self.registry.emitToString())
    }

    /// Every metric the server exposes, with its type and the `# HELP` text the scrape carries (swift-metrics has no
    /// place for it, so it is added to the registry's text here). docs/operations.md lists the same names; a test
    /// checks a scrape holds nothing else.
    public static let catalogue: [(name: String, type: String, help: String)] = [
        ("touchstone_http_requests_total", "counter", "HTTP requests answered, by method, route template and status."),
        ("touchstone_http_request_duration_seconds", "histogram", "Time to answer HTTP requests, by method and route template."),
        ("touchstone_ceremonies_started_total", "counter", "Challenge-based ceremonies begun, by kind."),
        ("touchstone_ceremonies_total", "counter", "Sign-ins, enrolments and confirmations finished, by kind, outcome and error code."),
        ("touchstone_audit_events_total", "counter", "Audit events stored, by type and outcome."),
        ("touchstone_lockouts_total", "counter", "Registrations and passkeys locked after repeated failed signatures, by kind."),
        ("touchstone_pin_disabled_total", "counter", "App PINs disabled after repeated wrong PINs."),
        ("touchstone_passkey_clone_warnings_total", "counter", "Passkey sign-ins whose signature counter did not increase."),
        ("touchstone_passkey_backup_eligibility_changes_total", "counter", "Passkey sign-ins whose authenticator changed the backup-eligible flag, by direction (gained, lost)."),
        ("touchstone_rate_limited_total", "counter", "Requests refused by a rate limit or the password throttle, by scope."),
        ("touchstone_access_tokens_issued_total", "counter", "Access tokens issued."),
        ("touchstone_dpop_signature_cpu_seconds", "histogram", "CPU time of one DPoP proof signature check in 16 (the thread's own)."),
        ("touchstone_token_introspections_total", "counter", "Token introspection requests, by whether the token was active."),
        ("touchstone_db_operation_duration_seconds", "histogram", "Store operations, waiting for a connection or a commit included, by engine, kind and outcome."),
        ("touchstone_db_operations_in_flight", "gauge", "Store operations under way, by engine."),
        ("touchstone_db_up", "gauge", "1 while the database answers (on PostgreSQL, the circuit breaker's view), else 0."),
        ("touchstone_sqlite_commit_duration_seconds", "histogram", "SQLite group-commit COMMIT time, the fsync included."),
        ("touchstone_sqlite_commit_batch_size", "histogram", "Operations made durable by one SQLite group commit."),
        ("touchstone_sqlite_checkpoint_duration_seconds", "histogram", "SQLite WAL checkpoints run beside the writer: copying the log back into the database file."),
        ("touchstone_webhook_deliveries_total", "counter", "Webhook delivery attempts, by outcome (delivered, retrying, failed)."),
        ("touchstone_webhook_endpoints_disabled_total", "counter", "Webhook endpoints disabled after failing for a whole retry round."),
        ("touchstone_webhook_queue_depth", "gauge", "Webhook messages waiting to be delivered (every instance's)."),
        ("touchstone_webhook_oldest_pending_seconds", "gauge", "Age of the oldest webhook message waiting to be delivered."),
        ("touchstone_mail_deliveries_total", "counter", "Mail delivery attempts, by outcome (sent, retrying, failed)."),
        ("touchstone_mail_queue_depth", "gauge", "Mails waiting to be sent (every instance's)."),
        ("touchstone_mail_failed", "gauge", "Mails given up (a permanent refusal or every attempt failed), kept until the retention ends."),
        ("touchstone_mail_oldest_pending_seconds", "gauge", "Age of the oldest mail waiting to be sent."),
        ("touchstone_push_notifications_total", "counter", "Apple pushes of sign-in requests to phones, by outcome (delivered, token_invalid, refused, failed)."),
        ("touchstone_mds_refreshes_total", "counter", "Authenticator metadata (FIDO MDS) refreshes from the source, by outcome."),
        ("touchstone_mds_blob_number", "gauge", "Serial number of the authenticator metadata BLOB in use."),
        ("touchstone_mds_next_update_timestamp_seconds", "gauge", "When the metadata BLOB in use is due to be replaced (Unix time)."),
        ("touchstone_process_resident_memory_bytes", "gauge", "Resident memory of the server process."),
        ("touchstone_process_open_fds", "gauge", "File descriptors open in the server process."),
        ("touchstone_uptime_seconds", "gauge", "Seconds since the server started."),
        ("touchstone_build_info", "gauge", "Always 1; the version label names the running build."),
    ]

    private static let helpByName = Dictionary(uniqueKeysWithValues: catalogue.map { ($0.name, $0.help) })

    /// The exposition text with a `# HELP` line before each family's `# TYPE` line.
    static func withHelp(_ text: String) -> [UInt8] {
        var output = ""
        output.reserveCapacity(text.utf8.count + 64 * Self.catalogue.count)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), let name = line.dropFirst(7).split(separator: " ").first, let help = Self.helpByName[String(name)] {
                output += "# HELP \(name) \(help)\n"
            }
            output += line
            output += "\n"
        }
        if output.hasSuffix("\n\n") { output.removeLast() }
        return Array(output.utf8)
    }
}

/// What the operating system says of this process (Linux `/proc`; nil elsewhere).
struct ProcessStatistics {
    var residentBytes: Int?
    var openFileDescriptors: Int?

    static func current() -> ProcessStatistics {
        var statistics = ProcessStatistics()
        // statm: size resident shared text lib data dt, in pages.
        if let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = text.split(separator: " ")
            if fields.count > 1, let pages = Int(fields[1]) {
                statistics.residentBytes = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
            }
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            statistics.openFileDescriptors = entries.count
        }
        return statistics
    }
}

/// The running build.
public enum TouchstoneBuild {
    /// The version reported by `touchstone --version` and `touchstone_build_info`.
    public static let version = "0.9.0"
}
