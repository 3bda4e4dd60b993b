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
        while normalized.count % 4 != 0 { normalized.append(UInt8(ascii: "=")) }
        guard let data = Data(base64Encoded: Data(normalized)) else { return nil }
        guard data.count <= maxDecodedLength else { return nil }
        return [UInt8](data)
    }

    /// Encodes bytes as base64url without padding.
    public static func urlEncode(_ bytes: some DataProtocol) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
