/// Why a JSON text was refused, with where (a JSON Pointer-like path such as `details.items[2]`).
public struct JSONInputError: Error, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { self.path.isEmpty ? self.reason : "\(self.path): \(self.reason)" }
}

/// A strict JSON parser (RFC 8259) for text that will be canonicalised and signed: valid UTF-8 only, no lone
/// surrogates, no duplicate keys, bounded depth and size, and numbers that survive a round trip through an IEEE double
/// (integers within ±2^53, at most 15 significant digits), so that two different texts can never give one payload.
public struct StrictJSONParser {
    /// Containers inside containers, the outermost counting as 1.
    public var maximumDepth: Int
    public var maximumBytes: Int

    public init(maximumDepth: Int = 16, maximumBytes: Int = 64 * 1024) {
        self.maximumDepth = maximumDepth
        self.maximumBytes = maximumBytes
    }

    public func parse(_ bytes: some Collection<UInt8>) throws(JSONInputError) -> JSONValue {
        let input = Array(bytes)
        guard input.count <= self.maximumBytes else { throw JSONInputError(path: "", reason: "the JSON text is longer than \(self.maximumBytes) bytes") }
        guard String(validating: input, as: UTF8.self) != nil else { throw JSONInputError(path: "", reason: "the text is not valid UTF-8") }
        var reader = Reader(bytes: input, maximumDepth: self.maximumDepth)
        reader.skipWhitespace()
        let value = try reader.value(path: "", depth: 0)
        reader.skipWhitespace()
        guard reader.index == input.count else { throw JSONInputError(path: "", reason: "unexpected text after the JSON value") }
        return value
    }

    /// 2^53: integers beyond it are not all representable as doubles.
    public static let largestExactInteger: Double = 9_007_199_254_740_992

    struct Reader {
        let bytes: [UInt8]
        let maximumDepth: Int
        var index = 0

        mutating func skipWhitespace() {
            while self.index < self.bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(self.bytes[self.index]) { self.index += 1 }
        }

        func peek() -> UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

        mutating func expect(_ literal: String, path: String) throws(JSONInputError) {
            for byte in literal.utf8 {
                guard self.peek() == byte else { throw JSONInputError(path: path, reason: "not valid JSON") }
                self.index += 1
            }
        }

        mutating func value(path: String, depth: Int) throws(JSONInputError) -> JSONValue {
            switch self.peek() {
            case UInt8(ascii: "{"): return try self.object(path: path, depth: depth + 1)
            case UInt8(ascii: "["): return try self.array(path: path, depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try self.string(path: path))
            case UInt8(ascii: "t"):
                try self.expect("true", path: path)
                return .bool(true)
            case UInt8(ascii: "f"):
                try self.expect("false", path: path)
                return .bool(false)
            case UInt8(ascii: "n"):
                try self.expect("null", path: path)
                return .null
            case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte):
                return .number(try self.number(path: path))
            default:
                throw JSONInputError(path: path, reason: "not valid JSON")
            }
        }

        mutating func object(path: String, depth: Int) throws(JSONInputError) -> JSONValue {
            guard depth <= self.maximumDepth else { throw JSONInputError(path: path, reason: "nested deeper than \(self.maximumDepth) levels") }
            self.index += 1
            var members: [String: JSONValue] = [:]
            self.skipWhitespace()
            if self.peek() == UInt8(ascii: "}") {
                self.index += 1
                return .object(members)
            }
            while true {
                self.skipWhitespace()
                guard self.peek() == UInt8(ascii: "\"") else { throw JSONInputError(path: path, reason: "not valid JSON (expected a key)") }
                let key = try self.string(path: path)
                let memberPath = path.isEmpty ? key : "\(path).\(key)"
                guard members[key] == nil else { throw JSONInputError(path: memberPath, reason: "the key appears twice") }
                self.skipWhitespace()
                try self.expect(":", path: memberPath)
                self.skipWhitespace()
                members[key] = try self.value(path: memberPath, depth: depth)
                self.skipWhitespace()
                if self.peek() == UInt8(ascii: ",") {
                    self.index += 1
                    continue
                }
                try self.expect("}", path: path)
                return .object(members)
            }
        }

        mutating func array(path: String, depth: Int) throws(JSONInputError) -> JSONValue {
            guard depth <= self.maximumDepth else { throw JSONInputError(path: path, reason: "nested deeper than \(self.maximumDepth) levels") }
            self.index += 1
            var elements: [JSONValue] = []
            self.skipWhitespace()
            if self.peek() == UInt8(ascii: "]") {
                self.index += 1
                return .array(elements)
            }
            while true {
                self.skipWhitespace()
                elements.append(try self.value(path: "\(path)[\(elements.count)]", depth: depth))
                self.skipWhitespace()
                if self.peek() == UInt8(ascii: ",") {
                    self.index += 1
                    continue
                }
                try self.expect("]", path: path)
                return .array(elements)
            }
        }

        mutating func string(path: String) throws(JSONInputError) -> String {
            self.index += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() {
                if !run.isEmpty {
                    scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                    run.removeAll(keepingCapacity: true)
                }
            }
            while true {
                guard let byte = self.peek() else { throw JSONInputError(path: path, reason: "unterminated string") }
                self.index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    scalars.append(try self.escape(path: path))
                case 0x00..<0x20:
                    throw JSONInputError(path: path, reason: "a control character must be escaped in JSON")
                default:
                    run.append(byte)
                }
            }
        }

        mutating func escape(path: String) throws(JSONInputError) -> Unicode.Scalar {
            guard let byte = self.peek() else { throw JSONInputError(path: path, reason: "unterminated escape") }
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let high = try self.hex4(path: path)
                if (0xD800...0xDBFF).contains(high) {
                    guard self.peek() == UInt8(ascii: "\\") else { throw JSONInputError(path: path, reason: "a lone surrogate (\\u\(Self.hex(high)))") }
                    self.index += 1
                    guard self.peek() == UInt8(ascii: "u") else { throw JSONInputError(path: path, reason: "a lone surrogate (\\u\(Self.hex(high)))") }
                    self.index += 1
                    let low = try self.hex4(path: path)
                    guard (0xDC00...0xDFFF).contains(low) else { throw JSONInputError(path: path, reason: "a lone surrogate (\\u\(Self.hex(high)))") }
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
                }
                guard let scalar = Unicode.Scalar(high) else { throw JSONInputError(path: path, reason: "a lone surrogate (\\u\(Self.hex(high)))") }
                return scalar
            default:
                throw JSONInputError(path: path, reason: "an unknown escape")
            }
        }

        mutating func hex4(path: String) throws(JSONInputError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = self.peek(), let digit = Self.hexDigit(byte) else { throw JSONInputError(path: path, reason: "a bad \\u escape") }
                value = value << 4 | digit
                self.index += 1
            }
            return value
        }

        static func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case 0x30...0x39: UInt32(byte - 0x30)
            case 0x41...0x46: UInt32(byte - 0x41 + 10)
            case 0x61...0x66: UInt32(byte - 0x61 + 10)
            default: nil
            }
        }

        static func hex(_ value: UInt32) -> String {
            let digits = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }

        /// RFC 8259 §6 number grammar, then the round-trip rules.
        mutating func number(path: String) throws(JSONInputError) -> Double {
            let start = self.index
            var significant: [UInt8] = []
            if self.peek() == UInt8(ascii: "-") { self.index += 1 }
            guard let first = self.peek(), (0x30...0x39).contains(first) else { throw JSONInputError(path: path, reason: "not a valid number") }
            if first == 0x30 {
                self.index += 1
                if let next = self.peek(), (0x30...0x39).contains(next) { throw JSONInputError(path: path, reason: "a number with a leading zero") }
                significant.append(0x30)
            } else {
                while let digit = self.peek(), (0x30...0x39).contains(digit) {
                    significant.append(digit)
                    self.index += 1
                }
            }
            if self.peek() == UInt8(ascii: ".") {
                self.index += 1
                var any = false
                while let digit = self.peek(), (0x30...0x39).contains(digit) {
                    significant.append(digit)
                    self.index += 1
                    any = true
                }
                guard any else { throw JSONInputError(path: path, reason: "not a valid number") }
            }
            if let e = self.peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
                self.index += 1
                if let sign = self.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { self.index += 1 }
                var any = false
                while let digit = self.peek(), (0x30...0x39).contains(digit) {
                    self.index += 1
                    any = true
                }
                guard any else { throw JSONInputError(path: path, reason: "not a valid number") }
            }
            let text = String(decoding: self.bytes[start..<self.index], as: UTF8.self)
            guard let value = Double(text), value.isFinite else { throw JSONInputError(path: path, reason: "a number out of range (send it as a string)") }
            // Significant digits: without leading and trailing zeros.
            let digits = significant.drop(while: { $0 == 0x30 }).reversed().drop(while: { $0 == 0x30 })
            guard digits.count <= 15 else {
                throw JSONInputError(path: path, reason: "a number with more than 15 significant digits (send it as a string)")
            }
            guard value.rounded(.towardZero) != value || abs(value) <= StrictJSONParser.largestExactInteger else {
                throw JSONInputError(path: path, reason: "an integer beyond ±2^53 (send it as a string)")
            }
            return value == 0 ? 0 : value
        }
    }
}
