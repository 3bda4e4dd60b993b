/// A JSON value as the confirmation payload needs it: objects keep one value per key (duplicates are refused when
/// parsing), numbers are IEEE doubles (checked when parsing to survive the round trip).
public enum JSONValue: Sendable, Hashable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { members } else { nil }
    }

    public var numberValue: Double? {
        if case .number(let value) = self { value } else { nil }
    }
}

extension JSONValue: Encodable {
    /// Encodes the value for a JSON response; whole numbers within ±2^53 as integers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .object(let members): try container.encode(members)
        case .array(let elements): try container.encode(elements)
        case .string(let text): try container.encode(text)
        case .number(let number):
            if number.rounded() == number, abs(number) <= StrictJSONParser.largestExactInteger {
                try container.encode(Int64(number))
            } else {
                try container.encode(number)
            }
        case .bool(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        }
    }
}
