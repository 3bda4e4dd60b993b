/// The rules for the text a confirmation shows on a phone (summary and details): untrusted text that must read as it
/// is. Violations are ``JSONInputError``s naming the field.
public enum ConfirmationText {
    public static let maximumSummaryCharacters = 200
    public static let maximumDetailsBytes = 4096
    public static let maximumDetailsDepth = 8

    /// Refuses Unicode control characters (Cc, C0 and C1 with DEL), the bidirectional embeddings, overrides and
    /// isolates (U+202A–U+202E, U+2066–U+2069) and U+2028/U+2029. Text is otherwise kept as sent.
    public static func check(_ text: String, path: String) throws(JSONInputError) {
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
                || value == 0x2028 || value == 0x2029
            {
                throw JSONInputError(path: path, reason: "must not contain U+\(Self.hex(value)) (control, bidirectional or separator characters)")
            }
        }
    }

    /// A summary: 1 to 200 characters, by the rules of ``check(_:path:)``.
    public static func summary(_ text: String, path: String = "summary") throws(JSONInputError) -> String {
        try Self.check(text, path: path)
        guard (1...Self.maximumSummaryCharacters).contains(text.count) else {
            throw JSONInputError(path: path, reason: "must be 1 to \(Self.maximumSummaryCharacters) characters")
        }
        return text
    }

    /// Details: an object (`null` is refused), at most 8 levels deep counting itself, every key and string by the
    /// rules of ``check(_:path:)``, and at most 4,096 bytes in canonical form.
    public static func details(_ value: JSONValue, path: String = "details") throws(JSONInputError) -> [String: JSONValue] {
        guard case .object(let members) = value else { throw JSONInputError(path: path, reason: "must be a JSON object") }
        try Self.walk(value, path: path, depth: 1)
        let size = CanonicalJSON.serialize(value).count
        guard size <= Self.maximumDetailsBytes else {
            throw JSONInputError(path: path, reason: "is \(size) bytes in canonical form; at most \(Self.maximumDetailsBytes)")
        }
        return members
    }

    static func walk(_ value: JSONValue, path: String, depth: Int) throws(JSONInputError) {
        switch value {
        case .object(let members):
            guard depth <= Self.maximumDetailsDepth else { throw JSONInputError(path: path, reason: "nested deeper than \(Self.maximumDetailsDepth) levels") }
            for (key, member) in members {
                try Self.check(key, path: "\(path).\(key)")
                try Self.walk(member, path: "\(path).\(key)", depth: depth + 1)
            }
        case .array(let elements):
            guard depth <= Self.maximumDetailsDepth else { throw JSONInputError(path: path, reason: "nested deeper than \(Self.maximumDetailsDepth) levels") }
            for (index, element) in elements.enumerated() { try Self.walk(element, path: "\(path)[\(index)]", depth: depth + 1) }
        case .string(let text):
            try Self.check(text, path: path)
        case .number, .bool, .null:
            break
        }
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
