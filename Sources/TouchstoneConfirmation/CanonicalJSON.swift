/// The JSON Canonicalization Scheme (RFC 8785): the one serialisation of a JSON value that is signed.
///
/// - Object members are sorted by their keys' UTF-16 code units; no white space.
/// - Strings are written as ECMAScript's `JSON.stringify` writes them: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
///   characters below U+0020 as `\u00xx` (lowercase hex), everything else as itself in UTF-8.
/// - Numbers are written as ECMAScript's `Number.prototype.toString` writes them (RFC 8785 §3.2.2.3): the shortest
///   digits that round-trip, in plain notation from 1e-6 to below 1e21, in exponent notation otherwise.
public enum CanonicalJSON {
    /// The canonical UTF-8 bytes of `value`.
    public static func serialize(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        Self.write(value, to: &output)
        return output
    }

    /// The canonical text of `value`.
    public static func string(_ value: JSONValue) -> String {
        String(decoding: Self.serialize(value), as: UTF8.self)
    }

    static func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: Self.number(number).utf8)
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { Array($0.utf16).lexicographicallyPrecedes(Array($1.utf16)) }
            for (index, key) in keys.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                Self.write(members[key]!, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `text` as a JSON string, escaped as `JSON.stringify` escapes it: `"` and `\` escaped, `\b`, `\f`,
    /// `\n`, `\r`, `\t`, the other characters below U+0020 as `\u00xx` (lowercase hex), everything else as its UTF-8.
    /// (The server's response writer uses it too: the same escaping is valid JSON for any reader.) Runs of bytes that
    /// need no escape are copied at once: every byte of a multi-byte UTF-8 sequence is 0x80 or above.
    public static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                Self.appendEscape(byte, to: &output)
                start = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
        case 0x08: output.append(contentsOf: #"\b"#.utf8)
        case 0x0C: output.append(contentsOf: #"\f"#.utf8)
        case 0x0A: output.append(contentsOf: #"\n"#.utf8)
        case 0x0D: output.append(contentsOf: #"\r"#.utf8)
        case 0x09: output.append(contentsOf: #"\t"#.utf8)
        default:
            func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
            output.append(contentsOf: #"\u00"#.utf8)
            output.append(hex(byte >> 4))
            output.append(hex(byte & 0x0F))
        }
    }

    /// ECMAScript `Number::toString(x)` for a finite double (ECMA-262 §6.1.6.1.20), from the shortest round-trip
    /// digits that Swift's `description` gives.
    public static func number(_ value: Double) -> String {
        precondition(value.isFinite, "JSON has no NaN or infinity")
        if value == 0 { return "0" }
        if value < 0 { return "-" + Self.number(-value) }
        let (digits, n) = Self.shortestDigits(value)
        let k = digits.count
        if k <= n && n <= 21 {
            return digits + String(repeating: "0", count: n - k)
        }
        if 0 < n && n <= 21 {
            let split = digits.index(digits.startIndex, offsetBy: n)
            return String(digits[..<split]) + "." + String(digits[split...])
        }
        if -6 < n && n <= 0 {
            return "0." + String(repeating: "0", count: -n) + digits
        }
        let exponent = n - 1
        let sign = exponent < 0 ? "-" : "+"
        let mantissa = k == 1 ? digits : String(digits.prefix(1)) + "." + String(digits.dropFirst())
        return mantissa + "e" + sign + String(abs(exponent))
    }

    /// The shortest decimal digits `s` (no leading or trailing zeros) and the exponent `n` with `value = 0.s × 10^n`.
    static func shortestDigits(_ value: Double) -> (String, Int) {
        let text = value.description  // shortest round-trip: "123.45", "1e-07", "1.2345e+16", "5e-324"
        let parts = text.split(separator: "e", maxSplits: 1)
        let exponent = parts.count == 2 ? Int(parts[1])! : 0
        let mantissa = parts[0]
        let integerPart = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)[0]
        var digits = String(mantissa.filter { $0 != "." })
        var pointPosition = integerPart.count + exponent
        while digits.hasPrefix("0") {
            digits.removeFirst()
            pointPosition -= 1
        }
        while digits.hasSuffix("0") { digits.removeLast() }
        return (digits, pointPosition)
    }
}
