public import Foundation

/// A value in an event's `data`: identifiers, names, numbers and flags only, never a secret.
public enum WebhookValue: Sendable, Hashable, Encodable {
    case string(String)
    case strings([String])
    case integer(Int64)
    case bool(Bool)
    case null

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

/// One event as a receiver gets it: `{"type": ..., "timestamp": <RFC 3339>, "data": {...}}`.
public struct WebhookEvent: Sendable, Hashable {
    /// `msg_` and 22 base64url characters: the `webhook-id` of every attempt to deliver it.
    public let id: String
    public let type: String
    public let timestamp: Date
    public let data: [String: WebhookValue]

    public init(id: String, type: String, timestamp: Date, data: [String: WebhookValue]) {
        self.id = id
        self.type = type
        self.timestamp = timestamp
        self.data = data
    }

    /// A new event id from 16 random bytes.
    public static func newId(randomBytes: (Int) -> [UInt8]) -> String {
        "msg_" + Data(randomBytes(16)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private struct Body: Encodable {
        let type: String
        let timestamp: String
        let data: [String: WebhookValue]
    }

    /// The body: compact JSON with sorted keys (what is signed and sent, byte for byte).
    public func body() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every value is a string, string list, integer, flag or null: encoding cannot fail.
        let data = (try? encoder.encode(Body(type: self.type, timestamp: Self.rfc3339(self.timestamp), data: self.data))) ?? Data("{}".utf8)
        return Array(data)
    }

    /// `2026-11-26T09:42:46.123Z`: UTC with milliseconds.
    public static func rfc3339(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let fraction = millis - seconds * 1000
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):"
            + "\(pad(parts.second, 2)).\(pad(Int(fraction), 3))Z"
    }
}
