public import Foundation

/// Base64 helpers that accept what real clients send and produce what the API promises.
///
/// Responses carry base64url without padding (RFC 4648 §5). Requests may carry base64url or standard base64, padded or
/// not, because CryptoKit code, react-native-biometrics and Android all differ.
public enum Base64 {
    /// Decodes base64url or standard base64, with or without padding (when there is padding, exactly what RFC 4648
    /// puts: `==` after two characters of a last group, `=` after three; never more).
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
            var padding = 0
            while end > start, utf8[end - 1] == UInt8(ascii: "=") {
                end -= 1
                padding += 1
            }
            guard padding == 0 || (end - start) % 4 + padding == 4 else { return nil }
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

    /// ``urlDecodeCanonical(_:)`` of text already in bytes (a part of a JWS, say).
    public static func urlDecodeCanonical(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        text.withUnsafeBufferPointer { Self.decodeUnpadded($0, allowStandard: false) }
    }

    /// ``urlDecodeCanonical(_:)`` of text already in bytes.
    public static func urlDecodeCanonical(_ text: [UInt8]) -> [UInt8]? {
        text.withUnsafeBufferPointer { Self.decodeUnpadded($0, allowStandard: false) }
    }

    /// Encodes bytes as base64url without padding.
    public static func urlEncode(_ bytes: some DataProtocol) -> String {
        Self.urlEncode([UInt8](bytes))
    }

    /// Encodes a byte array as base64url without padding (no generic copy first), straight into the string's storage.
    public static func urlEncode(_ input: [UInt8]) -> String {
        let length = (input.count * 4 + 2) / 3
        guard length > 0 else { return "" }
        return input.withUnsafeBufferPointer { input in
            Self.urlAlphabet.withUnsafeBufferPointer { alphabet in
                String(unsafeUninitializedCapacity: length) { output in
                    var index = 0
                    var written = 0
                    while index + 3 <= input.count {
                        let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                        output[written] = alphabet[Int(chunk >> 18)]
                        output[written + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                        output[written + 2] = alphabet[Int(chunk >> 6 & 0x3F)]
                        output[written + 3] = alphabet[Int(chunk & 0x3F)]
                        index += 3
                        written += 4
                    }
                    let remaining = input.count - index
                    if remaining > 0 {
                        let chunk = UInt32(input[index]) << 16 | (remaining == 2 ? UInt32(input[index + 1]) << 8 : 0)
                        output[written] = alphabet[Int(chunk >> 18)]
                        output[written + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                        written += 2
                        if remaining == 2 {
                            output[written] = alphabet[Int(chunk >> 6 & 0x3F)]
                            written += 1
                        }
                    }
                    return written
                }
            }
        }
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
        let tail = input.count % 4
        guard tail != 1 else { return nil }
        let length = input.count / 4 * 3 + (tail == 0 ? 0 : tail - 1)
        // Every character's table entry is ORed together: 0xFF marks a byte of neither alphabet, 0x40 the standard
        // alphabet's, 0x80 base64url's; checked once at the end.
        var seen: UInt8 = 0
        let output = Self.values.withUnsafeBufferPointer { values in
            [UInt8](unsafeUninitializedCapacity: length) { output, count in
                var index = 0
                var written = 0
                while index + 4 <= input.count {
                    let a = values[Int(input[index])], b = values[Int(input[index + 1])]
                    let c = values[Int(input[index + 2])], d = values[Int(input[index + 3])]
                    seen |= a | b | c | d
                    let chunk = UInt32(a & 0x3F) << 18 | UInt32(b & 0x3F) << 12 | UInt32(c & 0x3F) << 6 | UInt32(d & 0x3F)
                    output[written] = UInt8(truncatingIfNeeded: chunk >> 16)
                    output[written + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    output[written + 2] = UInt8(truncatingIfNeeded: chunk)
                    index += 4
                    written += 3
                }
                switch tail {
                case 2:
                    let a = values[Int(input[index])], b = values[Int(input[index + 1])]
                    seen |= a | b
                    // The unused low bits must be zero (a canonical encoding).
                    if b & 0x0F != 0 { seen = 0xFF }
                    output[written] = (a & 0x3F) << 2 | (b & 0x3F) >> 4
                case 3:
                    let a = values[Int(input[index])], b = values[Int(input[index + 1])], c = values[Int(input[index + 2])]
                    seen |= a | b | c
                    if c & 0x03 != 0 { seen = 0xFF }
                    output[written] = (a & 0x3F) << 2 | (b & 0x3F) >> 4
                    output[written + 1] = (b & 0x0F) << 4 | (c & 0x3F) >> 2
                default:
                    break
                }
                count = length
            }
        }
        // 0xFF: a byte outside both alphabets (or non-zero unused bits); 0xC0: both alphabets mixed.
        guard seen & 0xC0 != 0xC0, allowStandard || seen & 0x40 == 0 else { return nil }
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
