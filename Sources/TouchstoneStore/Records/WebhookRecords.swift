public import Foundation

/// A webhook endpoint: where events are posted, which types, and its signing secret sealed under the key-encryption
/// key (never stored in clear).
public struct WebhookEndpointRecord: Sendable, Hashable {
    public var id: String
    public var url: String
    public var description: String
    /// The subscribed event types, or `["*"]` for every type.
    public var events: [String]
    public var enabled: Bool
    /// The current secret, sealed (``KeySealing`` with the endpoint id as context).
    public var sealedSecret: [UInt8]
    /// The secret before the last rotation, sealed; it signs too until ``previousSecretExpiresAt``.
    public var previousSealedSecret: [UInt8]?
    public var previousSecretExpiresAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
    /// Why the server disabled it (`failing`), nil when enabled or disabled by an operator.
    public var disabledReason: String?
    public var lastSuccessAt: Date?
    /// The first failed attempt since the last success.
    public var failingSince: Date?

    public init(
        id: String,
        url: String,
        description: String,
        events: [String],
        enabled: Bool,
        sealedSecret: [UInt8],
        createdAt: Date
    ) {
        self.id = id
        self.url = url
        self.description = description
        self.events = events
        self.enabled = enabled
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
        self.updatedAt = createdAt
    }
}

/// An event for the webhook outbox, written with the audit event it reports (``AuditEventRecord/webhooks``): one
/// message per enabled endpoint subscribed to its type, in the same transaction.
public struct WebhookOutboxEvent: Sendable, Hashable {
    /// The `webhook-id`.
    public var id: String
    public var type: String
    /// The body, as sent.
    public var payload: String
    public var createdAt: Date

    public init(id: String, type: String, payload: String, createdAt: Date) {
        self.id = id
        self.type = type
        self.payload = payload
        self.createdAt = createdAt
    }
}

/// One event's delivery to one endpoint.
public struct WebhookMessageRecord: Sendable, Hashable {
    public enum State: String, Sendable {
        case pending
        case delivered
        case failed
    }

    public var endpointId: String
    public var eventId: String
    public var eventType: String
    public var payload: String
    public var createdAt: Date
    public var state: State
    /// Every attempt so far.
    public var attempts: Int
    /// Attempts since the round began (creation, or a retry asked for by an operator): what the schedule counts.
    public var roundAttempts: Int
    /// When the round began.
    public var roundStartedAt: Date
    public var nextAttemptAt: Date?
    public var deliveredAt: Date?
    public var lastStatus: Int?
    public var lastError: String?
}

/// One attempt to deliver a message.
public struct WebhookAttemptRecord: Sendable, Hashable {
    public var endpointId: String
    public var eventId: String
    /// 1 for the first attempt of the message.
    public var number: Int
    public var attemptedAt: Date
    /// The HTTP status, nil when no answer came (refused, timed out, not allowed).
    public var statusCode: Int?
    public var latencyMillis: Int64
    public var error: String?

    public init(endpointId: String, eventId: String, number: Int, attemptedAt: Date, statusCode: Int?, latencyMillis: Int64, error: String?) {
        self.endpointId = endpointId
        self.eventId = eventId
        self.number = number
        self.attemptedAt = attemptedAt
        self.statusCode = statusCode
        self.latencyMillis = latencyMillis
        self.error = error
    }
}

/// What an attempt leads to.
public enum WebhookAttemptOutcome: Sendable, Hashable {
    case delivered
    case retry(at: Date)
    /// The round is over without a success.
    case failed
}

/// The outbox's size, for the metrics.
public struct WebhookQueueStatistics: Sendable, Hashable {
    /// Messages not yet delivered nor failed.
    public var pending: Int
    /// When the oldest of them was created.
    public var oldestPendingAt: Date?

    public init(pending: Int, oldestPendingAt: Date?) {
        self.pending = pending
        self.oldestPendingAt = oldestPendingAt
    }
}
