public import Foundation
import TouchstoneCrypto

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

    /// The body: compact JSON with sorted keys (what is signed and sent, byte for byte). Written by hand: it is made
    /// for every announced event, on the sign-in path among others, where JSONEncoder and Calendar cost more than
    /// the rest of the outbox write.
    public func body() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        out += Array(#"{"data":{"#.utf8)
        for (index, key) in self.data.keys.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Self.appendString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            Self.append(self.data[key] ?? .null, to: &out)
        }
        out += Array(#"},"timestamp":"#.utf8)
        Self.appendString(Self.rfc3339(self.timestamp), to: &out)
        out += Array(#","type":"#.utf8)
        Self.appendString(self.type, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func append(_ value: WebhookValue, to out: inout [UInt8]) {
        switch value {
        case .string(let text): Self.appendString(text, to: &out)
        case .strings(let texts):
            out.append(UInt8(ascii: "["))
            for (index, text) in texts.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.appendString(text, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .integer(let number): out += Array(String(number).utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .null: out += Array("null".utf8)
        }
    }

    /// A JSON string (RFC 8259 §7): quotation mark, reverse solidus and control characters escaped, the rest as UTF-8.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0a: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0d: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `2026-11-26T09:42:46.123Z`: UTC, the time rounded to the millisecond as the store keeps it.
    public static func rfc3339(_ date: Date) -> String {
        RFC3339.string(millis: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
