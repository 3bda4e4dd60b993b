import Foundation

/// Header values: RFC 5322 dates, RFC 2047 encoded words for text that is not ASCII, and folding to 78 characters.
enum MailHeader {
    /// Refuses control characters (CR and LF above all) in a value that goes into a header.
    static func checkValue(_ value: String) throws(MailError) {
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.value == 0x2028 || $0.value == 0x2029 }) {
            throw .invalidHeader
        }
    }

    /// An RFC 5322 §3.3 date in UTC: `Thu, 26 Nov 2026 12:30:44 +0000`.
    static func date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { let n = n ?? 0; return n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[(c.weekday ?? 1) - 1]), \(c.day ?? 1) \(months[(c.month ?? 1) - 1]) \(c.year ?? 1970) "
            + "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) +0000"
    }

    /// Unstructured text (a subject): as it is when it is printable ASCII, else RFC 2047 `B` words.
    static func unstructured(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) ? text : self.encodedWords(text)
    }

    /// A display name as a phrase: a quoted string when ASCII (quotes and backslashes escaped), else encoded words.
    static func phrase(_ text: String) -> String {
        guard text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return self.encodedWords(text) }
        var quoted = "\""
        for character in text {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// RFC 2047 §4.1 `=?UTF-8?B?...?=` words of at most 75 characters each, split between characters (never inside a
    /// UTF-8 sequence or a grapheme), separated by spaces so that folding can break between them; a reader joins
    /// adjacent encoded words without the space (§6.2).
    static func encodedWords(_ text: String) -> String {
        // 75 - "=?UTF-8?B?".count - "?=".count = 63 characters of base64: at most 45 bytes of UTF-8.
        var words: [[UInt8]] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(character.utf8)
            // The first word shares its line with the header's name (at most `Subject: ` or `From: `): shorter.
            let limit = words.isEmpty ? 36 : 45
            if chunk.count + bytes.count > limit, !chunk.isEmpty {
                words.append(chunk)
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?\(Data($0).base64EncodedString())?=" }.joined(separator: " ")
    }

    /// Folds a header line at spaces so that no line exceeds 78 characters where a space allows (RFC 5322 §2.2.3).
    static func fold(_ line: String) -> String {
        guard line.utf8.count > 78 else { return line }
        var lines: [String] = []
        var current = ""
        for (index, word) in line.split(separator: " ", omittingEmptySubsequences: false).enumerated() {
            if current.isEmpty {
                current = String(word)
            } else if index > 1 && current.utf8.count + 1 + word.utf8.count > 78 {
                // Never between the header's name and its first word: a value that starts with a fold reads as one
                // that starts with a space.
                lines.append(current)
                current = " " + word
            } else {
                current += " " + word
            }
        }
        lines.append(current)
        return lines.joined(separator: "\r\n")
    }
}

/// Quoted-printable (RFC 2045 §6.7) in UTF-8, with CRLF line ends and soft breaks so that no line exceeds 76
/// characters. A line that starts with `.` has it encoded (`=2E`), so the body never relies on SMTP's dot-stuffing and
/// a `.eml` file is the message exactly as sent; `From ` at a line's start is encoded likewise (mbox readers).
enum QuotedPrintable {
    static func encode(_ text: String) -> String {
        let normalised = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        var output: [String] = []
        for line in normalised.split(separator: "\n", omittingEmptySubsequences: false) {
            output.append(self.encodeLine(Array(line.utf8)))
        }
        return output.joined(separator: "\r\n")
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func encodeLine(_ bytes: [UInt8]) -> String {
        var tokens: [[UInt8]] = []
        for (index, byte) in bytes.enumerated() {
            let isLast = index == bytes.count - 1
            let literal: Bool
            switch byte {
            case 0x3D: literal = false  // '='
            case 0x20, 0x09: literal = !isLast  // trailing white space would be stripped in transit
            case 0x2E where index == 0: literal = false  // a leading '.'
            case 0x46 where index == 0 && bytes.starts(with: Array("From ".utf8)): literal = false
            case 0x21...0x7E: literal = true
            default: literal = false
            }
            tokens.append(literal ? [byte] : [0x3D, self.hex[Int(byte >> 4)], self.hex[Int(byte & 0x0F)]])
        }
        // Soft line breaks: at most 75 characters plus the '=' per physical line.
        var lines: [[UInt8]] = [[]]
        for token in tokens {
            if lines[lines.count - 1].count + token.count > 75 {
                lines[lines.count - 1].append(0x3D)
                lines.append([])
            }
            lines[lines.count - 1] += token
        }
        return lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\r\n")
    }
}
