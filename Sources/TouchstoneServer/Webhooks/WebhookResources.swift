public import TouchstoneStore
public import TouchstoneWebhooks

/// An endpoint as the admin API answers it and `touchstone webhooks` prints it: the secret only when just made.
public struct WebhookEndpointResource: Encodable, Sendable {
    var id: String
    var url: String
    var events: [String]
    var description: String
    var enabled: Bool
    var disabledReason: String?
    var secret: String?
    var createdAt: String
    var updatedAt: String
    var lastSuccessAt: String?
    var failingSince: String?

    public init(_ record: WebhookEndpointRecord, secret: WebhookSecret? = nil) {
        self.id = record.id
        self.url = record.url
        self.events = record.events
        self.description = record.description
        self.enabled = record.enabled
        self.disabledReason = record.disabledReason
        self.secret = secret?.description
        self.createdAt = record.createdAt.rfc3339
        self.updatedAt = record.updatedAt.rfc3339
        self.lastSuccessAt = record.lastSuccessAt?.rfc3339
        self.failingSince = record.failingSince?.rfc3339
    }

    enum CodingKeys: String, CodingKey {
        case id, url, events, description, enabled, disabledReason, secret, createdAt, updatedAt, lastSuccessAt, failingSince
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.url, forKey: .url)
        try container.encode(self.events, forKey: .events)
        try container.encode(self.description, forKey: .description)
        try container.encode(self.enabled, forKey: .enabled)
        try container.encode(self.disabledReason, forKey: .disabledReason)
        try container.encodeIfPresent(self.secret, forKey: .secret)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.updatedAt, forKey: .updatedAt)
        try container.encode(self.lastSuccessAt, forKey: .lastSuccessAt)
        try container.encode(self.failingSince, forKey: .failingSince)
    }
}

/// One event's delivery to an endpoint, with its attempts.
public struct WebhookDeliveryResource: Encodable, Sendable {
    struct Attempt: Encodable, Sendable {
        var number: Int
        var attemptedAt: String
        var status: Int?
        var latencyMs: Int64
        var error: String?

        enum CodingKeys: String, CodingKey { case number, attemptedAt, status, latencyMs, error }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.number, forKey: .number)
            try container.encode(self.attemptedAt, forKey: .attemptedAt)
            try container.encode(self.status, forKey: .status)
            try container.encode(self.latencyMs, forKey: .latencyMs)
            try container.encode(self.error, forKey: .error)
        }
    }

    var eventId: String
    var type: String
    var createdAt: String
    var state: String
    var nextAttemptAt: String?
    var deliveredAt: String?
    var attempts: [Attempt]

    public init(_ message: WebhookMessageRecord, attempts: [WebhookAttemptRecord]) {
        self.eventId = message.eventId
        self.type = message.eventType
        self.createdAt = message.createdAt.rfc3339
        self.state = message.state.rawValue
        self.nextAttemptAt = message.state == .pending ? message.nextAttemptAt?.rfc3339 : nil
        self.deliveredAt = message.deliveredAt?.rfc3339
        self.attempts = attempts.map {
            Attempt(number: $0.number, attemptedAt: $0.attemptedAt.rfc3339, status: $0.statusCode, latencyMs: $0.latencyMillis, error: $0.error)
        }
    }

    enum CodingKeys: String, CodingKey { case eventId, type, createdAt, state, nextAttemptAt, deliveredAt, attempts }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.eventId, forKey: .eventId)
        try container.encode(self.type, forKey: .type)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.state, forKey: .state)
        try container.encode(self.nextAttemptAt, forKey: .nextAttemptAt)
        try container.encode(self.deliveredAt, forKey: .deliveredAt)
        try container.encode(self.attempts, forKey: .attempts)
    }
}

/// An event type of the catalogue, with what its `data` holds.
public struct WebhookEventTypeResource: Encodable, Sendable {
    var type: String
    var summary: String
    var data: [String: String]

    public init(_ type: WebhookEventType) {
        self.type = type.name
        self.summary = type.summary
        self.data = Dictionary(type.data.map { ($0.field, $0.meaning) }, uniquingKeysWith: { a, _ in a })
    }
}
