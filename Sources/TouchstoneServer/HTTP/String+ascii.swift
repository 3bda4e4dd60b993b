extension StringProtocol {
    /// The text without leading and trailing ASCII spaces and tabs (what HTTP header values may carry around them).
    ///
    /// Byte-level: Foundation's `trimmingCharacters(in:)` bridges through NSString on Linux, which costs more than the
    /// rest of reading a bearer token.
    var trimmingASCIISpaces: Substring {
        let whole = Substring(self)
        let utf8 = whole.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while end > start {
            let before = utf8.index(before: end)
            guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
            end = before
        }
        return Substring(utf8[start..<end])
    }
}

/// `application/x-www-form-urlencoded` encoding of a value: every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
/// percent-encoded (RFC 3986 §2.3), so a redirect's query parameters and a form body read back exactly.
func formEncode(_ value: String) -> String {
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
