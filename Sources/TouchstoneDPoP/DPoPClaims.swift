/// The claims of a proof's payload that RFC 9449 §4.2 names, read straight from the JSON bytes in one pass: every
/// proof a server accepts is parsed, so this is on the hot path of each DPoP request (Foundation's `JSONSerialization`
/// built a dictionary of bridged objects for it, several microseconds a proof).
///
/// The whole text must be one JSON object (RFC 8259: valid UTF-8, strict grammar, no lone surrogates in escapes, numbers
/// within a double's range);
/// members other than the six are checked and skipped, nested values included (bounded depth). A member of the six
/// named twice makes the text refused (RFC 7515 §5.2 lets a JWS reader refuse duplicate names; taking either copy would
/// let two readers see two proofs). A member of the wrong type counts as absent, as a reader asking for a string or a
/// number finds none.
struct DPoPClaims: Sendable, Hashable {
    var jti: String?
    var htm: String?
    var htu: String?
    var ath: String?
    var nonce: String?
    /// `iat` when it is a JSON number.
    var iat: Double?

    /// Nested arrays and objects at most (inside members this reader skips).
    static let maximumDepth = 32

    /// The claims of `bytes`; nil when the text is not one JSON object.
    static func parse(_ bytes: [UInt8]) -> DPoPClaims? {
        // Valid UTF-8 once for the whole text (ASCII, a client's usual case, needs no more than a scan).
        if bytes.contains(where: { $0 >= 0x80 }), String(validating: bytes, as: UTF8.self) == nil { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer)
            return reader.object()
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        enum Name { case jti, htm, htu, ath, nonce, iat, other }

        mutating func object() -> DPoPClaims? {
            self.skipWhitespace()
            guard self.take(UInt8(ascii: "{")) else { return nil }
            var claims = DPoPClaims()
            var seen: UInt8 = 0
            self.skipWhitespace()
            if !self.take(UInt8(ascii: "}")) {
                repeat {
                    self.skipWhitespace()
                    guard let name = self.memberName() else { return nil }
                    self.skipWhitespace()
                    guard self.take(UInt8(ascii: ":")) else { return nil }
                    self.skipWhitespace()
                    let bit: UInt8
                    switch name {
                    case .jti: bit = 1
                    case .htm: bit = 2
                    case .htu: bit = 4
                    case .ath: bit = 8
                    case .nonce: bit = 16
                    case .iat: bit = 32
                    case .other: bit = 0
                    }
                    guard seen & bit == 0 else { return nil }
                    seen |= bit
                    switch name {
                    case .other:
                        guard self.skipValue(depth: 1) else { return nil }
                    case .iat:
                        if self.peek() == UInt8(ascii: "-") || self.peek().map(Self.isDigit) == true {
                            guard let number = self.number() else { return nil }
                            claims.iat = number
                        } else {
                            guard self.skipValue(depth: 1) else { return nil }
                        }
                    default:
                        var text: String?
                        if self.peek() == UInt8(ascii: "\"") {
                            guard let string = self.string() else { return nil }
                            text = string
                        } else {
                            guard self.skipValue(depth: 1) else { return nil }
                        }
                        switch name {
                        case .jti: claims.jti = text
                        case .htm: claims.htm = text
                        case .htu: claims.htu = text
                        case .ath: claims.ath = text
                        default: claims.nonce = text
                        }
                    }
                    self.skipWhitespace()
                } while self.take(UInt8(ascii: ","))
                guard self.take(UInt8(ascii: "}")) else { return nil }
            }
            self.skipWhitespace()
            return self.index == self.bytes.count ? claims : nil
        }

        /// A member's name, as one of the six or `other`.
        mutating func memberName() -> Name? {
            guard self.peek() == UInt8(ascii: "\"") else { return nil }
            let start = self.index + 1
            guard let (end, escaped) = self.stringEnd() else { return nil }
            let name: String
            if escaped {
                guard let decoded = self.decode(from: start, to: end) else { return nil }
                name = decoded
            } else {
                name = String(decoding: UnsafeBufferPointer(rebasing: self.bytes[start..<end]), as: UTF8.self)
            }
            switch name {
            case "jti": return .jti
            case "htm": return .htm
            case "htu": return .htu
            case "ath": return .ath
            case "nonce": return .nonce
            case "iat": return .iat
            default: return .other
            }
        }

        mutating func string() -> String? {
            let start = self.index + 1
            guard let (end, escaped) = self.stringEnd() else { return nil }
            if escaped { return self.decode(from: start, to: end) }
            return String(decoding: UnsafeBufferPointer(rebasing: self.bytes[start..<end]), as: UTF8.self)
        }

        /// Moves past a string that starts at `index` (its opening quote); returns where its text ends (the closing
        /// quote) and whether it has escapes. Control characters are refused; escapes are checked for shape here.
        mutating func stringEnd() -> (Int, Bool)? {
            self.index += 1
            var escaped = false
            while self.index < self.bytes.count {
                let byte = self.bytes[self.index]
                switch byte {
                case UInt8(ascii: "\""):
                    let end = self.index
                    self.index += 1
                    return (end, escaped)
                case UInt8(ascii: "\\"):
                    escaped = true
                    guard self.index + 1 < self.bytes.count else { return nil }
                    switch self.bytes[self.index + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        self.index += 2
                    case UInt8(ascii: "u"):
                        guard let unit = self.unit(at: self.index) else { return nil }
                        self.index += 6
                        // Surrogates only in pairs (a lone one is no character), in skipped members too.
                        if (0xD800..<0xDC00).contains(unit) {
                            guard self.index + 1 < self.bytes.count, self.bytes[self.index] == UInt8(ascii: "\\"),
                                let low = self.unit(at: self.index), (0xDC00..<0xE000).contains(low)
                            else {
                                return nil
                            }
                            self.index += 6
                        } else if (0xDC00..<0xE000).contains(unit) {
                            return nil
                        }
                    default:
                        return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    self.index += 1
                }
            }
            return nil
        }

        /// The code unit of the `\\uXXXX` escape at `position` (its backslash); nil when it is not one.
        func unit(at position: Int) -> UInt32? {
            guard position + 6 <= self.bytes.count, self.bytes[position + 1] == UInt8(ascii: "u") else { return nil }
            var unit: UInt32 = 0
            for offset in 2..<6 {
                guard let digit = Self.hexValue(self.bytes[position + offset]) else { return nil }
                unit = unit << 4 | UInt32(digit)
            }
            return unit
        }

        /// The text of a string with escapes (already checked for shape), from `start` to `end` (exclusive); nil for
        /// a lone surrogate.
        func decode(from start: Int, to end: Int) -> String? {
            var scalars = String.UnicodeScalarView()
            var plain: [UInt8] = []
            var index = start
            func flush() {
                guard !plain.isEmpty else { return }
                scalars.append(contentsOf: String(decoding: plain, as: UTF8.self).unicodeScalars)
                plain.removeAll(keepingCapacity: true)
            }
            while index < end {
                let byte = self.bytes[index]
                guard byte == UInt8(ascii: "\\") else {
                    plain.append(byte)
                    index += 1
                    continue
                }
                flush()
                let kind = self.bytes[index + 1]
                index += 2
                let scalar: Unicode.Scalar?
                switch kind {
                case UInt8(ascii: "b"): scalar = "\u{08}"
                case UInt8(ascii: "f"): scalar = "\u{0C}"
                case UInt8(ascii: "n"): scalar = "\n"
                case UInt8(ascii: "r"): scalar = "\r"
                case UInt8(ascii: "t"): scalar = "\t"
                case UInt8(ascii: "u"):
                    // stringEnd() checked the escapes' shape and that surrogates come in pairs.
                    guard let unit = self.unit(at: index - 2) else { return nil }
                    index += 4
                    if (0xD800..<0xDC00).contains(unit) {
                        guard index + 6 <= end, let low = self.unit(at: index), (0xDC00..<0xE000).contains(low) else { return nil }
                        index += 6
                        scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                    } else {
                        scalar = Unicode.Scalar(unit)  // nil for a lone low surrogate
                    }
                default: scalar = Unicode.Scalar(kind)  // " \ /
                }
                guard let scalar else { return nil }
                scalars.append(scalar)
            }
            flush()
            return String(scalars)
        }

        /// A JSON number (RFC 8259 §6) as a double.
        mutating func number() -> Double? {
            let start = self.index
            _ = self.take(UInt8(ascii: "-"))
            guard let first = self.peek(), Self.isDigit(first) else { return nil }
            self.index += 1
            if first != UInt8(ascii: "0") { self.skipDigits() }
            if self.take(UInt8(ascii: ".")) {
                guard self.peek().map(Self.isDigit) == true else { return nil }
                self.skipDigits()
            }
            if self.peek() == UInt8(ascii: "e") || self.peek() == UInt8(ascii: "E") {
                self.index += 1
                if !self.take(UInt8(ascii: "+")) { _ = self.take(UInt8(ascii: "-")) }
                guard self.peek().map(Self.isDigit) == true else { return nil }
                self.skipDigits()
            }
            // A number beyond a double's range is refused, not read as infinity.
            guard let value = Double(String(decoding: UnsafeBufferPointer(rebasing: self.bytes[start..<self.index]), as: UTF8.self)),
                value.isFinite
            else {
                return nil
            }
            return value
        }

        /// Moves past any JSON value, checking it.
        mutating func skipValue(depth: Int) -> Bool {
            guard depth <= DPoPClaims.maximumDepth, let byte = self.peek() else { return false }
            switch byte {
            case UInt8(ascii: "\""):
                return self.stringEnd() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = byte == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                self.index += 1
                self.skipWhitespace()
                if self.take(close) { return true }
                repeat {
                    self.skipWhitespace()
                    if isObject {
                        guard self.peek() == UInt8(ascii: "\""), self.stringEnd() != nil else { return false }
                        self.skipWhitespace()
                        guard self.take(UInt8(ascii: ":")) else { return false }
                        self.skipWhitespace()
                    }
                    guard self.skipValue(depth: depth + 1) else { return false }
                    self.skipWhitespace()
                } while self.take(UInt8(ascii: ","))
                return self.take(close)
            case UInt8(ascii: "t"): return self.literal("true")
            case UInt8(ascii: "f"): return self.literal("false")
            case UInt8(ascii: "n"): return self.literal("null")
            default: return self.number() != nil
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard self.index + count <= self.bytes.count else { return false }
            for offset in 0..<count where self.bytes[self.index + offset] != word.utf8Start[offset] { return false }
            self.index += count
            return true
        }

        mutating func skipDigits() {
            while let byte = self.peek(), Self.isDigit(byte) { self.index += 1 }
        }

        mutating func skipWhitespace() {
            while let byte = self.peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { self.index += 1 }
        }

        func peek() -> UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

        mutating func take(_ byte: UInt8) -> Bool {
            guard self.peek() == byte else { return false }
            self.index += 1
            return true
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
    }
}
