/// A JSON value (RFC 8259), as the WebAuthn ceremonies need it: strings, booleans, null, numbers (kept as text),
/// arrays and objects.
///
/// The two documents a sign-in parses, the response JSON and `clientDataJSON`, are small and flat; parsing them with
/// this strict parser costs a fraction of what a general `Decodable` decoder does, which matters next to a single
/// signature verification (see docs/performance.md).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's text, validated against the JSON grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Why a document is not acceptable JSON.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Parses a complete document: one value, surrounded by white space only.
    ///
    /// Stricter than most parsers where leniency could hide an attack: invalid UTF-8, lone surrogates, control
    /// characters in strings and duplicate object keys are errors, and nesting is limited to `maxDepth`.
    public init(parsing bytes: [UInt8], maxDepth: Int = 32) throws(ParseError) {
        // The parser reads through a buffer pointer: no bounds check per byte (every index is checked against the
        // count by the parser itself) and no copy-on-write checks on the array.
        self = try bytes.withUnsafeBufferPointer { buffer throws(ParseError) in
            var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
            return try parser.parseDocument()
        }
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }
}

/// A JSON object's members, in document order, each key once.
///
/// The objects of a sign-in are small (four to six members): finding a key by comparing it with each is faster than
/// hashing it, and keeping the members in an array spares a hash table per object (see docs/performance.md). Beyond
/// ``indexedCount`` members the keys are also kept in a set, so that a large object is not quadratic to build.
public struct JSONObject: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue
    }

    /// The members, in the order the document has them.
    public private(set) var members: [Member] = []
    private var index: Set<String>?

    /// Members from which the keys are indexed.
    static let indexedCount = 16

    public init() {}

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements {
            precondition(self.append(key, value), "duplicate key \(key) in a JSON object literal")
        }
    }

    public var count: Int { self.members.count }
    public var isEmpty: Bool { self.members.isEmpty }
    public var keys: [String] { self.members.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        if let index = self.index, !index.contains(key) { return nil }
        for member in self.members where member.key == key { return member.value }
        return nil
    }

    /// Adds a member; `false` (and nothing added) when the key is already there.
    @discardableResult
    mutating func append(_ key: String, _ value: JSONValue) -> Bool {
        if self.index != nil {
            guard self.index!.insert(key).inserted else { return false }
        } else {
            for member in self.members where member.key == key { return false }
            if self.members.count == Self.indexedCount { self.index = Set(self.members.map(\.key) + [key]) }
        }
        // One allocation for a document's usual handful of members instead of growing 1, 2, 4, 8.
        if self.members.isEmpty { self.members.reserveCapacity(8) }
        self.members.append(Member(key: key, value: value))
        return true
    }

    /// Objects are equal when they have the same members, whatever their order (as JSON defines them).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent, like ==: the members' hashes are summed.
        hasher.combine(self.count)
        hasher.combine(self.members.reduce(0) { $0 &+ $1.hashValue })
    }
}

private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONValue.ParseError) -> JSONValue {
        let value = try self.parseValue()
        self.skipWhiteSpace()
        guard self.index == self.bytes.count else { throw self.error("unexpected data after the JSON value") }
        return value
    }

    private func error(_ message: String) -> JSONValue.ParseError {
        JSONValue.ParseError(description: "\(message) at byte \(self.index)")
    }

    private mutating func skipWhiteSpace() {
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case 0x20, 0x09, 0x0A, 0x0D: self.index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONValue.ParseError) -> JSONValue {
        self.skipWhiteSpace()
        guard self.index < self.bytes.count else { throw self.error("unexpected end of JSON") }
        switch self.bytes[self.index] {
        case UInt8(ascii: "{"): return try self.parseObject()
        case UInt8(ascii: "["): return try self.parseArray()
        case UInt8(ascii: "\""): return .string(try self.parseString())
        case UInt8(ascii: "t"): try self.expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try self.expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try self.expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try self.parseNumber())
        default: throw self.error("unexpected character")
        }
    }

    private mutating func expect(_ literal: StaticString) throws(JSONValue.ParseError) {
        let count = literal.utf8CodeUnitCount
        guard self.index + count <= self.bytes.count else { throw self.error("unexpected end of JSON") }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { self.bytes[self.index + $0] == expected[$0] }
        }
        guard matches else { throw self.error("invalid literal") }
        self.index += count
    }

    private mutating func enter() throws(JSONValue.ParseError) {
        self.depth += 1
        guard self.depth <= self.maxDepth else { throw self.error("JSON nested deeper than \(self.maxDepth)") }
    }

    private mutating func parseObject() throws(JSONValue.ParseError) -> JSONValue {
        try self.enter()
        self.index += 1  // {
        var object = JSONObject()
        self.skipWhiteSpace()
        if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "}") {
            self.index += 1
            self.depth -= 1
            return .object(object)
        }
        while true {
            self.skipWhiteSpace()
            guard self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "\"") else {
                throw self.error("expected a string key")
            }
            let key = try self.parseString()
            self.skipWhiteSpace()
            guard self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: ":") else { throw self.error("expected ':'") }
            self.index += 1
            let value = try self.parseValue()
            guard object.append(key, value) else { throw self.error("duplicate key '\(key)'") }
            self.skipWhiteSpace()
            guard self.index < self.bytes.count else { throw self.error("unexpected end of JSON") }
            switch self.bytes[self.index] {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "}"):
                self.index += 1
                self.depth -= 1
                return .object(object)
            default: throw self.error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONValue.ParseError) -> JSONValue {
        try self.enter()
        self.index += 1  // [
        var array: [JSONValue] = []
        self.skipWhiteSpace()
        if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "]") {
            self.index += 1
            self.depth -= 1
            return .array(array)
        }
        while true {
            array.append(try self.parseValue())
            self.skipWhiteSpace()
            guard self.index < self.bytes.count else { throw self.error("unexpected end of JSON") }
            switch self.bytes[self.index] {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "]"):
                self.index += 1
                self.depth -= 1
                return .array(array)
            default: throw self.error("expected ',' or ']'")
            }
        }
    }

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(JSONValue.ParseError) -> String {
        self.index += 1  // "
        let start = self.index
        // Fast path: no escapes. ASCII text needs no UTF-8 validation (the generic validating initialiser is slow).
        // Eight bytes at a time while none of them ends the string or needs a look (base64url fields are long).
        if let base = self.bytes.baseAddress {
            while self.index + 8 <= self.bytes.count,
                Self.isPlainASCII(UnsafeRawPointer(base + self.index).loadUnaligned(as: UInt64.self))
            {
                self.index += 8
            }
        }
        var isASCII = true
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: self.bytes[start..<self.index])
                let text: String
                if isASCII {
                    text = String(decoding: slice, as: UTF8.self)
                } else {
                    guard let valid = String(validating: slice, as: UTF8.self) else { throw self.error("invalid UTF-8 in a string") }
                    text = valid
                }
                self.index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw self.error("control character in a string") }
            if byte >= 0x80 { isASCII = false }
            self.index += 1
        }
        var utf8 = Array(self.bytes[start..<self.index])
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else { throw self.error("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                self.index += 1
                guard self.index < self.bytes.count else { throw self.error("unexpected end of JSON") }
                let escape = self.bytes[self.index]
                self.index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try self.parseUnicodeEscape()
                    utf8.append(contentsOf: String(Character(scalar)).utf8)
                default: throw self.error("invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw self.error("control character in a string") }
                utf8.append(byte)
                self.index += 1
            }
        }
        throw self.error("unterminated string")
    }

    /// Whether none of the eight bytes in `word` is a quote, a backslash, a control character or outside ASCII: bytes
    /// a string's scan can step over without looking at each.
    private static func isPlainASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        // A byte of `x` is zero exactly when this sets its high bit (the classic "has zero byte" test).
        func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & highBits != 0 }
        guard word & highBits == 0 else { return false }
        if hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C)) { return false }
        // With every byte below 0x80, this sets a byte's high bit exactly when the byte is below 0x20.
        return (word &- ones &* 0x20) & ~word & highBits == 0
    }

    /// Parses the hex digits after `\u`, and a second `\uXXXX` when the first is a high surrogate.
    private mutating func parseUnicodeEscape() throws(JSONValue.ParseError) -> Unicode.Scalar {
        let first = try self.parseHex4()
        switch first {
        case 0xD800...0xDBFF:
            guard self.index + 2 <= self.bytes.count, self.bytes[self.index] == UInt8(ascii: "\\"),
                self.bytes[self.index + 1] == UInt8(ascii: "u")
            else {
                throw self.error("lone surrogate in a string")
            }
            self.index += 2
            let second = try self.parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw self.error("lone surrogate in a string") }
            let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw self.error("invalid escape") }
            return scalar
        case 0xDC00...0xDFFF:
            throw self.error("lone surrogate in a string")
        default:
            guard let scalar = Unicode.Scalar(first) else { throw self.error("invalid escape") }
            return scalar
        }
    }

    private mutating func parseHex4() throws(JSONValue.ParseError) -> UInt32 {
        guard self.index + 4 <= self.bytes.count else { throw self.error("unexpected end of JSON") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = self.bytes[self.index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw self.error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            self.index += 1
        }
        return value
    }

    /// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    private mutating func parseNumber() throws(JSONValue.ParseError) -> String {
        let start = self.index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index]) {
                parser.index += 1
            }
            return parser.index - from
        }
        if self.bytes[self.index] == UInt8(ascii: "-") { self.index += 1 }
        guard self.index < self.bytes.count else { throw self.error("invalid number") }
        if self.bytes[self.index] == UInt8(ascii: "0") {
            self.index += 1
        } else {
            guard digits(&self) > 0 else { throw self.error("invalid number") }
        }
        if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: ".") {
            self.index += 1
            guard digits(&self) > 0 else { throw self.error("invalid number") }
        }
        if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "e") || self.bytes[self.index] == UInt8(ascii: "E") {
            self.index += 1
            if self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "+") || self.bytes[self.index] == UInt8(ascii: "-") {
                self.index += 1
            }
            guard digits(&self) > 0 else { throw self.error("invalid number") }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: self.bytes[start..<self.index]), as: UTF8.self)
    }
}
