public import Crypto
public import Foundation
import Logging
import TouchstoneCrypto
public import TouchstoneStore
public import TouchstoneWebhooks

/// Webhook endpoints (issue #32): made, changed, deleted, their secrets rotated, tests and retries queued. The CLI
/// (`touchstone webhooks ...`) and the admin API (`/v1/admin/webhooks`) both use these; every change is audited in
/// its own transaction.
public enum WebhookEndpoints {
    public static let maximumDescriptionLength = 500
    /// How long the secret before a rotation keeps signing.
    public static let rotationOverlap: TimeInterval = 24 * 3600

    /// An endpoint as made, and its secret (shown once by the admin API; the CLI shows it again on request).
    public struct Created: Sendable {
        public var record: WebhookEndpointRecord
        public var secret: WebhookSecret
    }

    /// What a `PATCH` changes; nil leaves a field as it is.
    public struct Change: Sendable {
        public var url: String?
        public var events: [String]?
        public var description: String?
        public var enabled: Bool?

        public init(url: String? = nil, events: [String]? = nil, description: String? = nil, enabled: Bool? = nil) {
            self.url = url
            self.events = events
            self.description = description
            self.enabled = enabled
        }
    }

    /// Checks a description: at most 500 characters (Unicode scalars, as the OpenAPI document's `maxLength` counts
    /// them), no control characters but line feeds.
    static func validate(description: String) throws(WebhookError) -> String {
        guard description.unicodeScalars.count <= Self.maximumDescriptionLength else {
            throw .invalidDescription("a description must be at most \(Self.maximumDescriptionLength) characters")
        }
        guard !description.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\n") || (0x7f...0x9f).contains($0.value) }) else {
            throw .invalidDescription("a description must not contain control characters")
        }
        return description
    }

    /// The sealing context of an endpoint's secret: a sealed secret opens only as the secret of that endpoint.
    static func context(_ id: String) -> [UInt8] { Array("webhook-secret:\(id)".utf8) }

    /// Makes an endpoint: the URL checked against `policy`, the event types against the catalogue, a new secret
    /// sealed under the key-encryption key; stored with its audit event.
    public static func create(
        url: String,
        events: [String],
        description: String,
        policy: DestinationPolicy,
        keyEncryptionKey: SymmetricKey,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        actor: String = "cli"
    ) async throws -> Created {
        try await Self.create(
            url: url, events: events, description: description, policy: policy, keyEncryptionKey: keyEncryptionKey, store: store,
            dependencies: dependencies, audit: Self.audit(store, dependencies), actor: actor)
    }

    static func create(
        url: String,
        events: [String],
        description: String,
        policy: DestinationPolicy,
        keyEncryptionKey: SymmetricKey,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies,
        audit: AuditLog,
        actor: String
    ) async throws -> Created {
        let checked = try policy.validate(url)
        let subscription = try WebhookEventType.subscription(events)
        let description = try Self.validate(description: description)
        let secrets = Secrets(randomBytes: dependencies.randomBytes)
        let id = "wh_" + secrets.newIdentifier()
        let secret = WebhookSecret.generate(randomBytes: dependencies.randomBytes)
        let record = WebhookEndpointRecord(
            id: id, url: checked.value, description: description, events: subscription, enabled: true,
            sealedSecret: try KeySealing.seal(secret.key, key: keyEncryptionKey, context: Self.context(id)),
            createdAt: dependencies.now()
        )
        let event = audit.event(.webhookEndpointCreated, reason: "\(actor): endpoint \(id)")
        try await store.unitOfWork { tx in
            try await tx.insertWebhookEndpoint(record)
            try await tx.insertAuditEvent(event)
        }
        audit.committed([event])
        await audit.subscriptions?.refresh(from: store, logger: audit.logger)
        return Created(record: record, secret: secret)
    }

    /// Applies a change; nil when there is no such endpoint. Enabling an endpoint the server disabled clears why.
    public static func update(
        id: String,
        _ change: Change,
        policy: DestinationPolicy,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        actor: String = "cli"
    ) async throws -> WebhookEndpointRecord? {
        try await Self.update(id: id, change, policy: policy, store: store, dependencies: dependencies, audit: Self.audit(store, dependencies), actor: actor)
    }

    static func update(
        id: String,
        _ change: Change,
        policy: DestinationPolicy,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies,
        audit: AuditLog,
        actor: String
    ) async throws -> WebhookEndpointRecord? {
        let url = try change.url.map { try policy.validate($0).value }
        let events = try change.events.map { try WebhookEventType.subscription($0) }
        let description = try change.description.map { try Self.validate(description: $0) }
        guard var record = try await store.webhookEndpoint(id: id) else { return nil }
        if let url { record.url = url }
        if let events { record.events = events }
        if let description { record.description = description }
        if let enabled = change.enabled {
            record.enabled = enabled
            record.disabledReason = nil
        }
        record.updatedAt = dependencies.now()
        var changed: [String] = []
        if change.url != nil { changed.append("url") }
        if change.events != nil { changed.append("events") }
        if change.description != nil { changed.append("description") }
        if let enabled = change.enabled { changed.append(enabled ? "enabled" : "disabled") }
        let event = audit.event(.webhookEndpointUpdated, reason: "\(actor): endpoint \(id) \(changed.joined(separator: ","))")
        let stored = record
        guard try await audit.commit(event, when: { tx in try await tx.updateWebhookEndpoint(stored) }) else { return nil }
        await audit.subscriptions?.refresh(from: store, logger: audit.logger)
        return record
    }

    /// Deletes an endpoint with its queued messages and history.
    public static func delete(id: String, store: any TouchstoneStore, dependencies: TouchstoneDependencies = .live, actor: String = "cli") async throws -> Bool {
        try await Self.delete(id: id, store: store, audit: Self.audit(store, dependencies), actor: actor)
    }

    static func delete(id: String, store: any TouchstoneStore, audit: AuditLog, actor: String) async throws -> Bool {
        let deleted = try await audit.commit(audit.event(.webhookEndpointDeleted, reason: "\(actor): endpoint \(id)")) { tx in
            try await tx.deleteWebhookEndpoint(id: id)
        }
        await audit.subscriptions?.refresh(from: store, logger: audit.logger)
        return deleted
    }

    /// Gives an endpoint a new secret; the old one signs too for ``rotationOverlap``. Nil when there is no such endpoint.
    public static func rotateSecret(
        id: String,
        keyEncryptionKey: SymmetricKey,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        actor: String = "cli"
    ) async throws -> WebhookSecret? {
        try await Self.rotateSecret(
            id: id, keyEncryptionKey: keyEncryptionKey, store: store, dependencies: dependencies, audit: Self.audit(store, dependencies), actor: actor)
    }

    static func rotateSecret(
        id: String,
        keyEncryptionKey: SymmetricKey,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies,
        audit: AuditLog,
        actor: String
    ) async throws -> WebhookSecret? {
        let secret = WebhookSecret.generate(randomBytes: dependencies.randomBytes)
        let sealed = try KeySealing.seal(secret.key, key: keyEncryptionKey, context: Self.context(id))
        let now = dependencies.now()
        let event = audit.event(.webhookSecretRotated, reason: "\(actor): endpoint \(id)")
        let rotated = try await audit.commit(event) { tx in
            try await tx.rotateWebhookSecret(id: id, sealedSecret: sealed, previousExpiresAt: now.addingTimeInterval(Self.rotationOverlap), at: now)
        }
        return rotated ? secret : nil
    }

    /// The endpoint's current secret.
    ///
    /// - Throws: ``KeyEncryptionKeyError`` when the key-encryption key is not the one it was sealed with.
    public static func secret(of endpoint: WebhookEndpointRecord, keyEncryptionKey: SymmetricKey) throws -> WebhookSecret {
        try Self.open(endpoint.sealedSecret, id: endpoint.id, keyEncryptionKey: keyEncryptionKey)
    }

    /// The secrets that sign now: the current one, and the previous one during its overlap.
    static func signingSecrets(of endpoint: WebhookEndpointRecord, keyEncryptionKey: SymmetricKey, now: Date) throws -> [WebhookSecret] {
        var secrets = [try Self.open(endpoint.sealedSecret, id: endpoint.id, keyEncryptionKey: keyEncryptionKey)]
        if let previous = endpoint.previousSealedSecret, let until = endpoint.previousSecretExpiresAt, now < until {
            secrets.append(try Self.open(previous, id: endpoint.id, keyEncryptionKey: keyEncryptionKey))
        }
        return secrets
    }

    private static func open(_ sealed: [UInt8], id: String, keyEncryptionKey: SymmetricKey) throws -> WebhookSecret {
        do {
            return WebhookSecret(key: try KeySealing.open(sealed, key: keyEncryptionKey, context: Self.context(id)))
        } catch {
            throw KeyEncryptionKeyError(
                "the secret of webhook endpoint \(id) does not open with this key-encryption key: give every instance and the CLI the key the server uses"
            )
        }
    }

    /// Queues a `webhook.test` event for an enabled endpoint, whatever its subscription; returns the event id, or nil
    /// when there is no such enabled endpoint.
    public static func sendTest(id: String, store: any TouchstoneStore, dependencies: TouchstoneDependencies = .live) async throws -> String? {
        let event = WebhookEvents.event(
            WebhookEventType.test.name, data: ["endpointId": .string(id)], at: dependencies.now(), randomBytes: dependencies.randomBytes)
        return try await store.enqueueWebhookTest(endpointId: id, event: event) ? event.id : nil
    }

    static func audit(_ store: any TouchstoneStore, _ dependencies: TouchstoneDependencies) -> AuditLog {
        AuditLog(store: store, secrets: Secrets(randomBytes: dependencies.randomBytes), now: dependencies.now, logger: Logger(label: "touchstone"))
    }
}
