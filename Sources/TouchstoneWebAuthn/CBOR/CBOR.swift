/// A CBOR data item (RFC 8949), as WebAuthn uses them.
public indirect enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    /// The negative integer `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map(CBORMap)
    case tagged(UInt64, CBOR)
    case bool(Bool)
    case null
    case undefined
    case simple(UInt8)
    case float(Double)

    /// An integer value, when it fits in `Int`.
    public var intValue: Int? {
        switch self {
        case .unsigned(let value): return value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): return value <= UInt64(Int.max) ? -1 - Int(value) : nil
        default: return nil
        }
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    public var arrayValue: [CBOR]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var mapValue: CBORMap? {
        if case .map(let value) = self { return value }
        return nil
    }

    /// Convenience for integer keys and values.
    public static func int(_ value: Int) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }
}

/// A CBOR map, keeping the order in which its entries were encoded. Keys are unique.
public struct CBORMap: Hashable, Sendable, ExpressibleByDictionaryLiteral {
    public struct Entry: Hashable, Sendable {
        public var key: CBOR
        public var value: CBOR

        public init(key: CBOR, value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    public private(set) var entries: [Entry]

    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        self.entries = elements.map { Entry(key: $0.0, value: $0.1) }
    }

    public subscript(key: CBOR) -> CBOR? {
        self.entries.first(where: { $0.key == key })?.value
    }

    public subscript(int key: Int) -> CBOR? { self[.int(key)] }
    public subscript(text key: String) -> CBOR? { self[.text(key)] }

    /// Sets `value` for `key`, replacing an existing entry.
    public mutating func set(_ key: CBOR, _ value: CBOR) {
        if let index = self.entries.firstIndex(where: { $0.key == key }) {
            self.entries[index].value = value
        } else {
            self.entries.append(Entry(key: key, value: value))
        }
    }

    public var count: Int { self.entries.count }
}

/// Why CBOR could not be decoded.
public struct CBORError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case truncated, indefiniteLength, tooDeep, tooManyItems, tooLong, invalidUTF8, duplicateMapKey, trailingBytes
        case reservedValue
    }

    private let code: Code
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A length or item runs past the end of the input.
    public static let truncated = CBORError(.truncated, "CBOR data ends early")
    /// Indefinite-length items are not allowed in WebAuthn (CTAP2 canonical CBOR).
    public static let indefiniteLength = CBORError(.indefiniteLength, "indefinite-length CBOR is not allowed")
    public static let tooDeep = CBORError(.tooDeep, "CBOR nesting is too deep")
    public static let tooManyItems = CBORError(.tooManyItems, "CBOR has too many items")
    public static let tooLong = CBORError(.tooLong, "a CBOR length is larger than allowed")
    public static let invalidUTF8 = CBORError(.invalidUTF8, "CBOR text is not valid UTF-8")
    public static let duplicateMapKey = CBORError(.duplicateMapKey, "CBOR map has a duplicate key")
    public static let trailingBytes = CBORError(.trailingBytes, "bytes follow the CBOR item")
    public static let reservedValue = CBORError(.reservedValue, "reserved CBOR additional information")

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }
    public var description: String { self.reason }
}
