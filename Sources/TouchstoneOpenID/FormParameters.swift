/// Parameters of a query string or an `application/x-www-form-urlencoded` body, read the way OAuth requires: a
/// parameter sent twice is an error (RFC 6749 §3.1), an empty value counts as absent, and values carry no control
/// characters.
public struct FormParameters: Sendable, Hashable {
    /// The longest value accepted for any parameter (the longest is an ID token hint, a token, or a passkey's answer);
    /// longer is `invalid_request`. Parameters with limits of their own check them.
    public static let maximumValueLength = 16 * 1024

    /// Every name and value, decoded, in order.
    public let pairs: [Pair]

    public struct Pair: Sendable, Hashable {
        public let name: String
        public let value: String
    }

    /// Parses `a=1&b=two+words&c=%2F`.
    ///
    /// - Throws: `invalid_request` for a malformed percent-encoding, text that is not UTF-8, a control character or an
    ///   oversized value.
    public init(urlEncoded text: Substring) throws(OpenIDError) {
        var pairs: [Pair] = []
        // By bytes: splitting a String by Characters runs grapheme breaking over every value.
        for part in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let pieces = part.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(pieces[0], what: "a parameter name")
            let value = pieces.count == 2 ? try Self.decode(pieces[1], what: "parameter '\(name)'") : ""
            guard value.utf8.count <= Self.maximumValueLength else {
                throw .invalidRequest("parameter '\(name)' is longer than \(Self.maximumValueLength) bytes")
            }
            pairs.append(Pair(name: name, value: value))
        }
        self.pairs = pairs
    }

    public init(urlEncoded text: String) throws(OpenIDError) {
        try self.init(urlEncoded: Substring(text))
    }

    public init(pairs: [Pair]) {
        self.pairs = pairs
    }

    /// The value of `name`, or nil when it is absent or empty.
    ///
    /// - Throws: `invalid_request` when it is sent more than once.
    public func single(_ name: String) throws(OpenIDError) -> String? {
        var found: String?
        for pair in self.pairs where pair.name == name {
            guard found == nil else { throw .invalidRequest("parameter '\(name)' is repeated") }
            found = pair.value
        }
        return found.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// ``single(_:)`` for a parameter that must be present.
    public func required(_ name: String) throws(OpenIDError) -> String {
        guard let value = try self.single(name) else { throw .invalidRequest("parameter '\(name)' is missing") }
        return value
    }

    /// Whether `name` was sent at all (even empty).
    public func contains(_ name: String) -> Bool {
        self.pairs.contains { $0.name == name }
    }

    private static func decode(_ text: Substring.UTF8View.SubSequence, what: String) throws(OpenIDError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else {
                    throw .invalidRequest("\(what) has a malformed percent-encoding")
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw .invalidRequest("\(what) is not UTF-8")
        }
        // C0 controls and DEL are single bytes; C1 controls are U+0080...U+009F, encoded as C2 80...C2 9F.
        var previous: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) {
                throw .invalidRequest("\(what) must not contain control characters")
            }
            previous = byte
        }
        return decoded
    }

    /// `application/x-www-form-urlencoded` encoding of a value: every byte but the unreserved ones (`A-Z a-z 0-9 - . _
    /// ~`) percent-encoded (RFC 3986 §2.3), so a redirect's query parameters and a form body read back exactly.
    public static func encode(_ value: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
