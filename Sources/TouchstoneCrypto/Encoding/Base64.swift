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
        var text = Substring(string).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count / 4 * 3 <= maxDecodedLength + 3 else { return nil }
        while text.hasSuffix("=") { text.removeLast() }
        var normalized = [UInt8]()
        normalized.reserveCapacity(text.utf8.count + 3)
        var sawURLAlphabet = false
        var sawStandardAlphabet = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                normalized.append(byte)
            case UInt8(ascii: "-"):
                sawURLAlphabet = true
                normalized.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"):
                sawURLAlphabet = true
                normalized.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"):
                sawStandardAlphabet = true
                normalized.append(byte)
            default:
                return nil
            }
        }
        // Mixing the two alphabets is never produced by a real encoder.
        guard !(sawURLAlphabet && sawStandardAlphabet) else { return nil }
        guard normalized.count % 4 != 1 else { return nil }
        guard let bytes = Self.decodeUnpadded(normalized) else { return nil }
        guard bytes.count <= maxDecodedLength else { return nil }
        return bytes
    }

    /// Decodes base64url without padding exactly as ``urlEncode(_:)`` produces it (what Touchstone stores); `nil` for
    /// anything else.
    public static func urlDecodeCanonical(_ string: String) -> [UInt8]? {
        var input = [UInt8]()
        input.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "-"): input.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): input.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="): return nil
            default: input.append(byte)
            }
        }
        guard input.count % 4 != 1, let bytes = Self.decodeUnpadded(input) else { return nil }
        return bytes
    }

    /// Encodes bytes as base64url without padding.
    public static func urlEncode(_ bytes: some DataProtocol) -> String {
        let input = [UInt8](bytes)
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

    private static let urlAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Values of the standard alphabet's characters; 0xFF for every other byte.
    private static let standardValues: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()

    /// Decodes standard-alphabet characters without padding (length not 1 modulo 4). Like RFC 4648 decoders that
    /// refuse non-canonical input, it rejects a final character whose unused low bits are not zero, so that every
    /// byte string has exactly one encoding.
    private static func decodeUnpadded(_ input: [UInt8]) -> [UInt8]? {
        var output = [UInt8]()
        output.reserveCapacity(input.count * 3 / 4)
        var index = 0
        while index + 4 <= input.count {
            let a = Self.standardValues[Int(input[index])], b = Self.standardValues[Int(input[index + 1])]
            let c = Self.standardValues[Int(input[index + 2])], d = Self.standardValues[Int(input[index + 3])]
            guard (a | b | c | d) & 0xC0 == 0 else { return nil }  // 0xFF (not in the alphabet) has those bits
            let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            output.append(UInt8(chunk >> 16))
            output.append(UInt8(chunk >> 8 & 0xFF))
            output.append(UInt8(chunk & 0xFF))
            index += 4
        }
        switch input.count - index {
        case 0:
            return output
        case 2:
            let a = Self.standardValues[Int(input[index])], b = Self.standardValues[Int(input[index + 1])]
            guard (a | b) & 0xC0 == 0, b & 0x0F == 0 else { return nil }
            output.append(a << 2 | b >> 4)
            return output
        case 3:
            let a = Self.standardValues[Int(input[index])], b = Self.standardValues[Int(input[index + 1])]
            let c = Self.standardValues[Int(input[index + 2])]
            guard (a | b | c) & 0xC0 == 0, c & 0x03 == 0 else { return nil }
            output.append(a << 2 | b >> 4)
            output.append((b & 0x0F) << 4 | c >> 2)
            return output
        default:
            return nil
        }
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
