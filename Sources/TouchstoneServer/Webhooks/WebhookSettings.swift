public import TouchstoneWebhooks

/// How webhooks are delivered (issue #32).
public struct WebhookSettings: Sendable {
    /// Which URLs and destination addresses are accepted (`TOUCHSTONE_WEBHOOKS_ALLOW_HTTP`,
    /// `TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE`).
    public var destinations = DestinationPolicy()
    /// Attempts in flight per endpoint and instance (`TOUCHSTONE_WEBHOOKS_CONCURRENCY`, 1–32, default 4); 1 delivers
    /// an endpoint's events strictly one after the other.
    public var concurrency = 4
    /// Days delivered and failed messages are kept for the delivery history (`TOUCHSTONE_WEBHOOKS_RETENTION_DAYS`,
    /// 1–365, default 30).
    public var retentionDays = 30

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        if let value = environment["TOUCHSTONE_WEBHOOKS_ALLOW_HTTP"] {
            switch value.lowercased() {
            case "on", "true": self.destinations.allowHTTP = true
            case "off", "false": self.destinations.allowHTTP = false
            default: throw ConfigurationError("TOUCHSTONE_WEBHOOKS_ALLOW_HTTP", value)
            }
        }
        if let value = environment["TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE"] {
            guard let allowed = DestinationPolicy.PrivateDestinations(rawValue: value.lowercased()) else {
                throw ConfigurationError("TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE", value)
            }
            self.destinations.allowPrivate = allowed
        }
        if let value = environment["TOUCHSTONE_WEBHOOKS_CONCURRENCY"] {
            guard let count = Int(value), (1...32).contains(count) else { throw ConfigurationError("TOUCHSTONE_WEBHOOKS_CONCURRENCY", value) }
            self.concurrency = count
        }
        if let value = environment["TOUCHSTONE_WEBHOOKS_RETENTION_DAYS"] {
            guard let days = Int(value), (1...365).contains(days) else { throw ConfigurationError("TOUCHSTONE_WEBHOOKS_RETENTION_DAYS", value) }
            self.retentionDays = days
        }
    }
}
