public import Foundation

/// An alert notification for Apple's push service: what the phone shows and the data the app reads.
public struct APNsNotification: Sendable, Hashable {
    public var title: String
    public var body: String
    /// The notification category (its actions in the app).
    public var category: String?
    /// Custom top-level keys beside `aps` (identifiers only: a push passes through Apple).
    public var data: [String: String]
    /// Apple discards it after this time (`apns-expiration`); nil: one attempt only.
    public var expiresAt: Date?
    /// Notifications with the same id replace each other on the phone (`apns-collapse-id`, at most 64 bytes).
    public var collapseId: String?

    public init(title: String, body: String, category: String? = nil, data: [String: String] = [:], expiresAt: Date? = nil, collapseId: String? = nil) {
        self.title = title
        self.body = body
        self.category = category
        self.data = data
        self.expiresAt = expiresAt
        self.collapseId = collapseId
    }

    /// The JSON body: `{"aps": {"alert": {"title", "body"}, "sound": "default", "category"?}, ...data}`.
    public func payload() -> [UInt8] {
        struct Alert: Encodable {
            var title: String
            var body: String
        }
        struct APS: Encodable {
            var alert: Alert
            var sound = "default"
            var category: String?
        }
        struct Body: Encodable {
            var aps: APS
            var data: [String: String]

            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(self.aps, forKey: Key(stringValue: "aps"))
                for (key, value) in self.data where key != "aps" { try container.encode(value, forKey: Key(stringValue: key)) }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = Body(aps: APS(alert: Alert(title: self.title, body: self.body), category: self.category), data: self.data)
        return Array((try? encoder.encode(body)) ?? Data("{}".utf8))
    }
}
