import Foundation

/// The one set of rules for the text people type: passwords, PINs, email addresses and the names they give things.
/// Every endpoint that takes one of them applies these (through the `decode...` helpers of `Request+json.swift`),
/// so that sign-up, sign-in, password change and PINs can never disagree about what a value is.
///
/// docs/api.md ("Text rules") documents them for clients.
enum InputRules {
    // MARK: Passwords

    /// The fewest characters a new password may have, counted as Unicode code points as sent (as NIST SP 800-63B
    /// counts them, and as JSON Schema's `minLength` does, so the OpenAPI document states the rule exactly).
    static let minimumPasswordCharacters = 8
    /// The most characters a password may have, counted like the minimum (code points as sent, JSON Schema's
    /// `maxLength`). A bound against oversized input, not a rule people meet: the hash covers every byte (see
    /// ``PasswordHasher``), so nothing past bcrypt's 72 bytes is ignored.
    static let maximumPasswordCharacters = 1024

    /// A password as the rules see it: Unicode text without control characters, normalised to NFC.
    struct Password: Sendable {
        /// What is hashed: the NFC form.
        var normalized: String
        /// The text as sent (only for checking hashes made before the rules, which hashed the text as sent).
        var asSent: String
    }

    /// Checks a password that is being set (sign-up, password change): the rules plus the minimum length.
    static func newPassword(_ text: String, field: String) throws(FieldError) -> Password {
        let password = try self.password(text, field: field)
        guard text.unicodeScalars.count >= self.minimumPasswordCharacters else {
            throw FieldError(message: "field '\(field)' must be at least \(self.minimumPasswordCharacters) characters")
        }
        return password
    }

    /// Checks a password that is being presented (sign-in): the same rules, without the minimum length, so that a
    /// password set before a rule changed can still be presented.
    static func password(_ text: String, field: String) throws(FieldError) -> Password {
        if let bad = text.unicodeScalars.first(where: Self.isForbiddenInSecrets) {
            throw FieldError(message: "field '\(field)' must not contain control characters (found U+\(Self.hex(bad)))")
        }
        guard text.unicodeScalars.count <= self.maximumPasswordCharacters else {
            throw FieldError(message: "field '\(field)' is longer than \(self.maximumPasswordCharacters) characters")
        }
        return Password(normalized: text.precomposedStringWithCanonicalMapping, asSent: text)
    }

    /// Control characters (Cc, C0 and C1 with DEL), line and paragraph separators, and the Basic Multilingual Plane's
    /// non-characters (U+FDD0–U+FDEF, U+FFFE, U+FFFF), which some systems treat as terminators or byte-order marks:
    /// never part of a secret someone types. Exactly what the OpenAPI document's password pattern excludes (the
    /// non-characters of the other planes are as harmless as any unassigned code point, and a pattern that names them
    /// would need escapes that JSON Schema's regular expressions do not share).
    static func isForbiddenInSecrets(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2028, 0x2029, 0xFDD0...0xFDEF, 0xFFFE, 0xFFFF: true
        default: scalar.properties.generalCategory == .control
        }
    }

    // MARK: Every string

    /// Refuses C0 and C1 control characters (NUL, line breaks, escape, DEL...) in a string the API takes: no identifier,
    /// token, key, name or filter has one, and a NUL in particular is where C strings end (a database binding text up
    /// to a terminator stores and finds a shorter value than the one validated) or an error from PostgreSQL. Every JSON
    /// string field and query parameter passes through this before anything else reads it.
    ///
    /// - Parameters:
    ///   - kind: What the message calls the value: `field 'x'` (the default) or `parameter 'x'`.
    ///   - allowLineBreaks: Let CR and LF through (the lines of a PEM public key); NUL and the rest stay refused.
    static func noControlCharacters(_ text: String, field: String, kind: String = "field ", allowLineBreaks: Bool = false) throws(FieldError) {
        // Fast path: ASCII without controls, the case of nearly every value.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return }
        let isRefused = { (scalar: Unicode.Scalar) in
            scalar.properties.generalCategory == .control && !(allowLineBreaks && (scalar == "\n" || scalar == "\r"))
        }
        if let bad = text.unicodeScalars.first(where: isRefused) {
            let name = kind.isEmpty ? field : "\(kind)'\(field)'"
            throw FieldError(message: "\(name) must not contain control characters (found U+\(Self.hex(bad)))")
        }
    }

    // MARK: PINs

    /// An app PIN: 4 to 8 ASCII digits, nothing else.
    static func pin(_ text: String, field: String = "pin") throws(FieldError) -> String {
        guard (4...8).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw FieldError(message: "field '\(field)' must be 4 to 8 digits")
        }
        return text
    }

    // MARK: Email addresses

    /// Checks and normalises an email address, the account's identifier.
    ///
    /// Refused: control, format, private-use and surrogate characters and line separators (``isRefusedInAddresses``:
    /// invisible or bidirectional characters make two addresses look alike), any white space, anything but exactly
    /// one `@`, a local part over 64 characters or with empty dot-separated parts or `"(),:;<>[\]`, a domain that is
    /// not at least two dot-separated labels of letters, digits and inner hyphens (each at most 63 bytes, 253 in all),
    /// and more than 254 characters in all. Lengths count Unicode code points of the address as sent, as JSON
    /// Schema's `maxLength` does. Quoted local parts and IP-literal domains are not accepted. A code point no Unicode
    /// version has assigned yet is accepted (it is neither invisible nor a control; the next version may assign it).
    ///
    /// Normalised: NFC, then lowercase, domain and local part alike: no mail provider people use tells `Ana@` from
    /// `ana@`, and two accounts that differ only in case would be two accounts for one person.
    static func email(_ text: String, field: String = "email") throws(FieldError) -> String {
        let invalid = FieldError(message: "field '\(field)' is not a valid email address")
        guard text.unicodeScalars.count <= 254 else { throw FieldError(message: "field '\(field)' is longer than 254 characters") }
        if let bad = text.unicodeScalars.first(where: { Self.isRefusedInAddresses($0) }) {
            throw FieldError(message: "field '\(field)' must not contain control, format, private-use or surrogate characters (found U+\(Self.hex(bad)))")
        }
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
            throw FieldError(message: "field '\(field)' must not contain white space")
        }
        guard let at = text.unicodeScalars.firstIndex(of: "@"), text.unicodeScalars[text.unicodeScalars.index(after: at)...].allSatisfy({ $0 != "@" }),
            (1...64).contains(text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: at))
        else {
            throw invalid
        }
        let email = text.precomposedStringWithCanonicalMapping.lowercased().precomposedStringWithCanonicalMapping
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw invalid }
        let (local, domain) = (parts[0], parts[1])
        // By code point, as the document's pattern reads it (a combining mark after a dot is not part of the dot).
        let specials = "\"(),:;<>[\\]".unicodeScalars
        guard !local.isEmpty,
            !local.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty),
            !local.unicodeScalars.contains(where: { specials.contains($0) })
        else {
            throw invalid
        }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard domain.utf8.count <= 253, labels.count >= 2,
            labels.allSatisfy({ label in
                !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
            })
        else {
            throw invalid
        }
        return email
    }

    // MARK: Names shown to people

    /// Checks a name that is shown to people (a display name, a device or passkey name): no control characters, no
    /// line or paragraph separators, no bidirectional overrides or isolates (which can make text read differently from
    /// what it is), not blank, and no surrounding white space. Kept as sent otherwise, normalised to NFC.
    static func displayText(_ text: String, field: String, maxLength: Int = 200) throws(FieldError) -> String {
        if let bad = text.unicodeScalars.first(where: Self.isForbiddenInDisplayText) {
            throw FieldError(message: "field '\(field)' must not contain control characters (found U+\(Self.hex(bad)))")
        }
        let normalized = text.precomposedStringWithCanonicalMapping
        guard !normalized.isEmpty, normalized.unicodeScalars.contains(where: { !$0.properties.isWhitespace }) else {
            throw FieldError(message: "field '\(field)' must not be empty")
        }
        guard normalized.first?.isWhitespace != true, normalized.last?.isWhitespace != true else {
            throw FieldError(message: "field '\(field)' must not begin or end with white space")
        }
        // As sent, not normalised: what the client measured against the document's maxLength.
        guard !Self.isLonger(text, than: maxLength) else {
            throw FieldError(message: "field '\(field)' is longer than \(maxLength) characters")
        }
        return normalized
    }

    /// Whether `text` has more than `maxLength` code points, as the OpenAPI document's `maxLength` counts them (JSON
    /// Schema): a name in another script is not held to a third or a quarter of the length a Latin one gets. A string
    /// has no more code points than UTF-8 bytes, so only one with more bytes than the limit is counted.
    static func isLonger(_ text: String, than maxLength: Int) -> Bool {
        text.utf8.count > maxLength && text.unicodeScalars.count > maxLength
    }

    /// Control characters (Cc: C0, DEL and C1), U+2028/U+2029, and the bidirectional embeddings, overrides and
    /// isolates U+202A–U+202E and U+2066–U+2069.
    private static func isForbiddenInDisplayText(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar.value == 0x2028 || scalar.value == 0x2029
            || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// What an email address may not contain (its own message names them): control (Cc), format (Cf: zero-width
    /// and bidirectional marks, tag characters), private-use (Co) and surrogate (Cs) code points, and the line and
    /// paragraph separators. The OpenAPI document's address pattern excludes the same, character by character
    /// (SystemTests checks it).
    static func isRefusedInAddresses(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse: true
        default: false
        }
    }

    private static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
