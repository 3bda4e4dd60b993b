public import Foundation

/// Webhook endpoints and the outbox of their messages (issue #32).
///
/// Messages are written by the audit events that carry ``AuditEventRecord/webhooks`` (in the transaction of the
/// change they report, for every enabled endpoint subscribed to the type) and by ``enqueueWebhookTest(endpointId:event:)``.
/// A dispatcher claims them for a while (a lease: a dispatcher that dies leaves them to another when it runs out),
/// records each attempt, and reschedules or finishes them.
public protocol WebhookStore: Sendable {
    /// Stores a new endpoint. Throws ``StoreError/conflict(_:)`` when its id is taken.
    func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws
    func webhookEndpoint(id: String) async throws -> WebhookEndpointRecord?
    /// Every endpoint, oldest first.
    func webhookEndpoints() async throws -> [WebhookEndpointRecord]
    /// Replaces an endpoint's URL, description, event types, enabled flag and disabled reason; returns whether it
    /// exists.
    func updateWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws -> Bool
    /// Deletes an endpoint with its messages and attempts; returns whether it existed.
    func deleteWebhookEndpoint(id: String) async throws -> Bool
    /// Makes `sealedSecret` the endpoint's secret; the one it replaces keeps signing until `previousExpiresAt`.
    func rotateWebhookSecret(id: String, sealedSecret: [UInt8], previousExpiresAt: Date, at: Date) async throws -> Bool
    /// Queues `event` for one endpoint whatever its subscription (the test event); false when there is no enabled
    /// endpoint with this id.
    func enqueueWebhookTest(endpointId: String, event: WebhookOutboxEvent) async throws -> Bool
    /// Enabled endpoints with a message due at `now` that no live lease holds (at most `limit`).
    func dueWebhookEndpoints(now: Date, limit: Int) async throws -> [String]
    /// Leases up to `limit` due messages of an enabled endpoint, oldest first, until `leaseUntil`, under `token`.
    func claimWebhookMessages(endpointId: String, now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [WebhookMessageRecord]
    /// Records an attempt of a message leased under `token` and what follows it; false (nothing recorded) when the
    /// lease was lost. A delivery marks the endpoint's last success; a failure starts its failing period.
    func finishWebhookAttempt(_ attempt: WebhookAttemptRecord, token: String, outcome: WebhookAttemptOutcome) async throws -> Bool
    /// Disables an enabled endpoint with `reason` when it has had no success since `since`; returns whether it did.
    func disableFailingWebhookEndpoint(id: String, since: Date, reason: String, at: Date) async throws -> Bool
    /// The newest messages of an endpoint (newest first, at most `limit`), each with its attempts (oldest first).
    func webhookDeliveries(endpointId: String, limit: Int) async throws -> [(WebhookMessageRecord, [WebhookAttemptRecord])]
    /// Queues a message again, now, as a new round (delivered or failed alike); false when there is no such message.
    func retryWebhookMessage(endpointId: String, eventId: String, at: Date) async throws -> Bool
    /// The event types (or `*`) some enabled endpoint subscribes to.
    func webhookSubscribedTypes() async throws -> Set<String>
    /// How many messages wait, and since when.
    func webhookQueueStatistics() async throws -> WebhookQueueStatistics
    /// Deletes delivered and failed messages created before `cutoff`; returns how many.
    func purgeWebhookMessages(before cutoff: Date) async throws -> Int
}
