public import Foundation

/// Base64 helpers that accept what real clients send and produce what the API promises.
///
/// Responses carry base64url without padding (RFC 4648 §5). Requests may carry base64url or standard base64, padded or
/// not, because CryptoKit code, react-native-biometrics and Android all differ.
public enum Base64 {
    /// Decodes base64url or standard base64, with or without padding.
    ///
    /// - Parameters:
    ///   - string: The encoded text. Surrounding white space is ignored; white space inside is not accepted.
    ///   - maxDecodedLength: Input whose decoded form would be longer than this is rejected before decoding.
    /// - Returns: The decoded bytes, or `nil` when the text is not valid base64 of either alphabet.
    public static func decode(_ string: String, maxDecodedLength: Int = 1 << 20) -> [UInt8]? {
        var string = string
        return string.withUTF8 { utf8 -> [UInt8]? in
            // Trimmed on bytes (ASCII white space): Foundation's trimming cost more than the decoding.
            var start = 0
            var end = utf8.count
            while start < end, Self.isWhiteSpace(utf8[start]) { start += 1 }
            while end > start, Self.isWhiteSpace(utf8[end - 1]) { end -= 1 }
            guard (end - start) / 4 * 3 <= maxDecodedLength + 3 else { return nil }
            while end > start, utf8[end - 1] == UInt8(ascii: "=") { end -= 1 }
            guard let bytes = Self.decodeUnpadded(UnsafeBufferPointer(rebasing: utf8[start..<end]), allowStandard: true) else {
                return nil
            }
            return bytes.count <= maxDecodedLength ? bytes : nil
        }
    }

    /// Decodes base64url without padding exactly as ``urlEncode(_:)`` produces it (what Touchstone stores); `nil` for
    /// anything else.
    public static func urlDecodeCanonical(_ string: String) -> [UInt8]? {
        var string = string
        return string.withUTF8 { Self.decodeUnpadded($0, allowStandard: false) }
    }

    /// Encodes bytes as base64url without padding.
    public static func urlEncode(_ bytes: some DataProtocol) -> String {
        Self.urlEncode([UInt8](bytes))
    }

    /// Encodes a byte array as base64url without padding (no generic copy first).
    public static func urlEncode(_ input: [UInt8]) -> String {
        var output = [UInt8]()
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(Self.urlAlphabet[Int(chunk >> 18)])
            output.append(Self.urlAlphabet[Int(chunk >> 12 & 0x3F)])
            output.append(Self.urlAlphabet[Int(chunk >> 6 & 0x3F)])
            output.append(Self.urlAlphabet[Int(chunk & 0x3F)])
            index += 3
        }
        let remaining = input.count - index
        if remaining > 0 {
            let chunk = UInt32(input[index]) << 16 | (remaining == 2 ? UInt32(input[index + 1]) << 8 : 0)
            output.append(Self.urlAlphabet[Int(chunk >> 18)])
            output.append(Self.urlAlphabet[Int(chunk >> 12 & 0x3F)])
            if remaining == 2 { output.append(Self.urlAlphabet[Int(chunk >> 6 & 0x3F)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    private static let urlAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value, with 0x40 set for the standard alphabet's `+` and `/` and 0x80 for base64url's `-`
    /// and `_`; 0xFF for bytes of neither alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "+"))] = 62 | 0x40
        table[Int(UInt8(ascii: "/"))] = 63 | 0x40
        table[Int(UInt8(ascii: "-"))] = 62 | 0x80
        table[Int(UInt8(ascii: "_"))] = 63 | 0x80
        return table
    }()

    /// Decodes base64 without padding, in one pass. Either alphabet, never both in one text (no real encoder mixes
    /// them); the standard one only when `allowStandard`. Like RFC 4648 decoders that refuse non-canonical input, it
    /// rejects a final character whose unused low bits are not zero, so that every byte string has one encoding.
    private static func decodeUnpadded(_ input: UnsafeBufferPointer<UInt8>, allowStandard: Bool) -> [UInt8]? {
        guard input.count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(input.count * 3 / 4)
        var alphabets: UInt8 = 0
        var index = 0
        func value(_ byte: UInt8) -> UInt8? {
            let entry = Self.values[Int(byte)]
            guard entry != 0xFF else { return nil }
            alphabets |= entry & 0xC0
            return entry & 0x3F
        }
        while index + 4 <= input.count {
            guard let a = value(input[index]), let b = value(input[index + 1]), let c = value(input[index + 2]),
                let d = value(input[index + 3])
            else { return nil }
            let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            output.append(UInt8(chunk >> 16))
            output.append(UInt8(chunk >> 8 & 0xFF))
            output.append(UInt8(chunk & 0xFF))
            index += 4
        }
        switch input.count - index {
        case 0:
            break
        case 2:
            guard let a = value(input[index]), let b = value(input[index + 1]), b & 0x0F == 0 else { return nil }
            output.append(a << 2 | b >> 4)
        case 3:
            guard let a = value(input[index]), let b = value(input[index + 1]), let c = value(input[index + 2]), c & 0x03 == 0
            else { return nil }
            output.append(a << 2 | b >> 4)
            output.append((b & 0x0F) << 4 | c >> 2)
        default:
            return nil
        }
        guard alphabets != 0xC0, allowStandard || alphabets & 0x40 == 0 else { return nil }
        return output
    }
}

/// Lowercase hexadecimal.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output = [UInt8]()
        output.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            output.append(Self.digits[Int(byte >> 4)])
            output.append(Self.digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
