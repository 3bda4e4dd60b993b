import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebhooks

/// Delivers the outbox (issue #32): every second it looks for endpoints with messages due, and runs one worker per
/// such endpoint (at most ``maximumWorkers`` at once). A worker leases up to `concurrency` of its endpoint's oldest
/// due messages, posts them in parallel, records every attempt, and repeats until none is due.
///
/// A lease lasts ``leaseDuration`` (four times the attempt deadline): a dispatcher that dies mid-delivery leaves its
/// messages to another instance when the lease runs out. The same message is therefore attempted by one instance at
/// a time; a receiver may still see it twice (an answer lost on the way back), which is why receivers deduplicate by
/// `webhook-id`.
final class WebhookDispatcher: Sendable {
    let store: any TouchstoneStore
    let keyEncryptionKey: SymmetricKey
    let post: @Sendable (WebhookPost) async -> WebhookPostResult
    let policy: DestinationPolicy
    let concurrency: Int
    let schedule: RetrySchedule
    let audit: AuditLog
    let logger: Logger
    let now: @Sendable () -> Date
    let randomBytes: @Sendable (Int) -> [UInt8]
    let retention: TimeInterval

    static let leaseDuration: TimeInterval = 60
    static let maximumWorkers = 64
    /// Endpoints with a worker running in this instance.
    private let active = NIOLockedValueBox<Set<String>>([])
    private let lastPurge = NIOLockedValueBox<Date?>(nil)
    private let lastSubscriptionRead = NIOLockedValueBox<ContinuousClock.Instant>(.now)

    init(
        store: any TouchstoneStore,
        keyEncryptionKey: SymmetricKey,
        post: @escaping @Sendable (WebhookPost) async -> WebhookPostResult,
        policy: DestinationPolicy,
        concurrency: Int,
        schedule: RetrySchedule = .standard,
        audit: AuditLog,
        logger: Logger,
        now: @escaping @Sendable () -> Date,
        randomBytes: @escaping @Sendable (Int) -> [UInt8],
        retention: TimeInterval = 30 * 86_400
    ) {
        self.store = store
        self.keyEncryptionKey = keyEncryptionKey
        self.post = post
        self.policy = policy
        self.concurrency = concurrency
        self.schedule = schedule
        self.audit = audit
        self.logger = logger
        self.now = now
        self.randomBytes = randomBytes
        self.retention = retention
    }

    /// Delivers everything due now and waits until it is done (what tests call; the service runs workers in the
    /// background instead). Returns the attempts made.
    @discardableResult
    func deliverDue() async throws -> Int {
        let endpoints = try await self.store.dueWebhookEndpoints(now: self.now(), limit: Self.maximumWorkers)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for id in endpoints where self.begin(id) {
                group.addTask {
                    defer { self.end(id) }
                    return try await self.work(endpointId: id)
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// The service's loop: once a second, workers for the endpoints that have none; hourly, the purge of old
    /// history. On SIGTERM it starts no worker and waits for those in flight (`TOUCHSTONE_SHUTDOWN_GRACE_SECONDS`, after
    /// which the service group cancels them: their leases run out, nothing is lost).
    func run() async {
        // A discarding group: the workers' ends are not kept (the loop runs for the server's lifetime).
        await withDiscardingTaskGroup { group in
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                do {
                    let endpoints = try await self.store.dueWebhookEndpoints(now: self.now(), limit: Self.maximumWorkers)
                    for id in endpoints where self.begin(id) {
                        group.addTask {
                            defer { self.end(id) }
                            do {
                                _ = try await self.work(endpointId: id)
                            } catch {
                                self.logger.warning("webhook delivery to \(id) paused: \(error)")
                            }
                        }
                    }
                    try await self.purgeIfDue()
                    await self.refreshSubscriptionsIfDue()
                } catch {
                    self.logger.warning("webhook dispatcher: \(error)")
                }
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
                } catch {
                    break
                }
            }
            // The discarding group waits for the workers in flight as it ends.
        }
    }

    private func begin(_ id: String) -> Bool {
        self.active.withLockedValue { active in
            guard active.count < Self.maximumWorkers else { return false }
            return active.insert(id).inserted
        }
    }

    private func end(_ id: String) {
        _ = self.active.withLockedValue { $0.remove(id) }
    }

    /// Re-reads which types have subscribers every ``WebhookSubscriptions/refreshInterval`` (changes made by the
    /// CLI or another instance).
    private func refreshSubscriptionsIfDue() async {
        guard let subscriptions = self.audit.subscriptions else { return }
        let now = ContinuousClock.now
        let due = self.lastSubscriptionRead.withLockedValue { last in
            guard now - last >= WebhookSubscriptions.refreshInterval else { return false }
            last = now
            return true
        }
        if due { await subscriptions.refresh(from: self.store, logger: self.logger) }
    }

    private func purgeIfDue() async throws {
        let now = self.now()
        let due = self.lastPurge.withLockedValue { last in
            guard last.map({ now.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            last = now
            return true
        }
        if due { _ = try await self.store.purgeWebhookMessages(before: now.addingTimeInterval(-self.retention)) }
    }

    /// One endpoint's worker: rounds of leased messages until none is due.
    private func work(endpointId: String) async throws -> Int {
        var attempts = 0
        while !Task.isCancelled {
            let now = self.now()
            let token = Hex.encode(self.randomBytes(16))
            let messages = try await self.store.claimWebhookMessages(
                endpointId: endpointId, now: now, leaseUntil: now.addingTimeInterval(Self.leaseDuration), token: token, limit: self.concurrency)
            guard !messages.isEmpty, let endpoint = try await self.store.webhookEndpoint(id: endpointId) else { break }
            let secrets = try WebhookEndpoints.signingSecrets(of: endpoint, keyEncryptionKey: self.keyEncryptionKey, now: now)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for message in messages {
                    group.addTask { try await self.attempt(message, endpoint: endpoint, secrets: secrets, token: token) }
                }
                try await group.waitForAll()
            }
            attempts += messages.count
        }
        return attempts
    }

    private func attempt(_ message: WebhookMessageRecord, endpoint: WebhookEndpointRecord, secrets: [WebhookSecret], token: String) async throws {
        let body = Array(message.payload.utf8)
        let started = self.now()
        let timestamp = Int64(started.timeIntervalSince1970.rounded(.down))
        let result = await self.send(body, id: message.eventId, timestamp: timestamp, to: endpoint, secrets: secrets)
        let finished = self.now()
        var status: Int?
        var failure: String?
        switch result {
        case .answered(let code):
            status = code
            if !(200..<300).contains(code) {
                failure = (300..<400).contains(code) ? "HTTP \(code) (redirects are not followed)" : "HTTP \(code)"
            }
        case .failed(let reason):
            failure = reason
        }
        let outcome: WebhookAttemptOutcome
        if failure == nil {
            outcome = .delivered
        } else if let next = self.schedule.nextAttempt(after: message.roundAttempts + 1, at: finished, unit: self.unitRandom()) {
            outcome = .retry(at: next)
        } else {
            outcome = .failed
        }
        let attempt = WebhookAttemptRecord(
            endpointId: endpoint.id, eventId: message.eventId, number: message.attempts + 1, attemptedAt: started, statusCode: status,
            latencyMillis: max(0, finished.millis - started.millis), error: failure)
        guard try await self.store.finishWebhookAttempt(attempt, token: token, outcome: outcome) else {
            self.logger.notice("webhook \(message.eventId) to \(endpoint.id): lease lost; another instance has it")
            return
        }
        let metrics = self.audit.metrics
        switch outcome {
        case .delivered:
            metrics?.webhookAttempt(outcome: "delivered")
        case .retry(let at):
            metrics?.webhookAttempt(outcome: "retrying")
            self.logger.info(
                "webhook attempt failed; retrying",
                metadata: ["endpoint": "\(endpoint.id)", "event": "\(message.eventId)", "error": "\(failure ?? "")", "retry_at": "\(at.rfc3339)"]
            )
        case .failed:
            metrics?.webhookAttempt(outcome: "failed")
            self.logger.warning("webhook delivery failed", metadata: ["endpoint": "\(endpoint.id)", "event": "\(message.eventId)", "error": "\(failure ?? "")"])
            try await self.audit.record(
                .webhookDeliveryFailed, .failure,
                reason: "endpoint \(endpoint.id) event \(message.eventId): \(failure ?? "") after \(message.roundAttempts + 1) attempts")
            // An endpoint that has not succeeded once during this whole round is switched off.
            if try await self.store.disableFailingWebhookEndpoint(id: endpoint.id, since: message.roundStartedAt, reason: "failing", at: finished) {
                metrics?.webhookEndpointDisabled()
                self.logger.warning("webhook endpoint \(endpoint.id) disabled: no delivery succeeded for a whole retry round")
                try await self.audit.record(.webhookEndpointDisabled, .info, reason: "endpoint \(endpoint.id): failing since \(message.roundStartedAt.rfc3339)")
            }
        }
    }

    /// Posts a signed message; a URL the policy now refuses (TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE or _HTTP changed since
    /// the endpoint was made) is a failed attempt.
    private func send(_ body: [UInt8], id: String, timestamp: Int64, to endpoint: WebhookEndpointRecord, secrets: [WebhookSecret]) async -> WebhookPostResult {
        let url: WebhookURL
        do {
            url = try self.policy.validate(endpoint.url)
        } catch {
            return .failed("refused: \(error.message)")
        }
        return await self.post(
            WebhookPost(
                url: url,
                headers: [
                    ("content-type", "application/json"),
                    ("user-agent", "Touchstone-Webhooks/1"),
                    ("webhook-id", id),
                    ("webhook-timestamp", String(timestamp)),
                    ("webhook-signature", WebhookSignature.header(id: id, timestamp: timestamp, body: body, secrets: secrets)),
                ],
                body: body
            )
        )
    }

    /// A uniform value in 0..<1 from the injected randomness (the retry jitter).
    private func unitRandom() -> Double {
        let bytes = self.randomBytes(8)
        let value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Double(value >> 11) / Double(1 << 53)
    }
}

/// The dispatcher as a service of the application.
struct WebhookDispatchService: Service {
    let dispatcher: WebhookDispatcher
    let poster: WebhookPoster?

    func run() async throws {
        await self.dispatcher.run()
        await self.poster?.shutdown()
    }
}
