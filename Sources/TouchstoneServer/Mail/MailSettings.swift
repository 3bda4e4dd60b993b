import Foundation
public import TouchstoneMail

/// How mail leaves the server (issue #33).
///
/// With `TOUCHSTONE_SMTP_URL` mail goes to that SMTP server; without it each mail is written as a `.eml` file to
/// `TOUCHSTONE_MAIL_DIR` (by default `touchstone-mail/` beside the SQLite database), so every flow can be followed
/// with nothing installed. On PostgreSQL without SMTP the folder must be named explicitly (several instances writing
/// to a default folder each would scatter the mail).
public struct MailSettings: Sendable {
    /// `TOUCHSTONE_SMTP_URL`: `smtp://user:pass@host:587` (STARTTLS required), `smtp://host:25?starttls=off`, or
    /// `smtps://user:pass@host:465`.
    public var smtp: SMTPServer?
    /// `TOUCHSTONE_SMTP_CA_FILE`: PEM certificates to trust for the SMTP server instead of the system's roots (a
    /// company's own authority).
    public var smtpCAFile: String?
    /// `TOUCHSTONE_MAIL_FROM`: the sender, `Name <address>` or `address`; by default `no-reply@` the public URL's host,
    /// with the relying party's name.
    public var from: String?
    /// `TOUCHSTONE_MAIL_DIR`: where `.eml` files go without SMTP.
    public var directory: String?
    /// `TOUCHSTONE_PUBLIC_URL`: the address of the web page that links in mail open (by default the issuer).
    public var publicURL: String?
    /// `TOUCHSTONE_MAIL_RATE_LIMIT`: mails a route may send to one address (default `5/1h`); every mail-sending
    /// route counts toward it, for known and unknown addresses alike.
    public var perAddress = RateLimit(capacity: 5, interval: 720)
    /// `TOUCHSTONE_MAIL_LEASE_SECONDS` (10–3600, default 180): how long a sender holds the mails it took before another
    /// instance may take them; how long a mail waits after its sender was killed. Keep it above the longest attempt the
    /// SMTP server can cause (connect, replies, the final dot).
    public var lease: Double = 180

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        if let value = environment["TOUCHSTONE_SMTP_URL"], !value.isEmpty {
            do {
                self.smtp = try SMTPServer(url: value)
            } catch {
                // The URL may hold a password: the error names the variable and the reason, not the value.
                throw ConfigurationError("TOUCHSTONE_SMTP_URL", "(not shown): \(error.reason)")
            }
        }
        if let value = environment["TOUCHSTONE_SMTP_CA_FILE"], !value.isEmpty {
            guard FileManager.default.isReadableFile(atPath: value) else { throw ConfigurationError("TOUCHSTONE_SMTP_CA_FILE", value) }
            self.smtpCAFile = value
        }
        if let value = environment["TOUCHSTONE_MAIL_FROM"], !value.isEmpty {
            guard (try? Self.sender(value, defaultName: "x")) != nil else { throw ConfigurationError("TOUCHSTONE_MAIL_FROM", value) }
            self.from = value
        }
        if let value = environment["TOUCHSTONE_MAIL_DIR"], !value.isEmpty { self.directory = value }
        if let value = environment["TOUCHSTONE_PUBLIC_URL"], !value.isEmpty {
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme ?? ""), url.host != nil, url.query == nil, url.fragment == nil else {
                throw ConfigurationError("TOUCHSTONE_PUBLIC_URL", value)
            }
            self.publicURL = value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        if let value = environment["TOUCHSTONE_MAIL_RATE_LIMIT"] {
            guard let limit = RateLimit(value) else { throw ConfigurationError("TOUCHSTONE_MAIL_RATE_LIMIT", value) }
            self.perAddress = limit
        }
        if let value = environment["TOUCHSTONE_MAIL_LEASE_SECONDS"] {
            guard let seconds = Int(value), (10...3600).contains(seconds) else { throw ConfigurationError("TOUCHSTONE_MAIL_LEASE_SECONDS", value) }
            self.lease = Double(seconds)
        }
    }

    /// The sender of `TOUCHSTONE_MAIL_FROM`: `Name <address>` or a bare address (then named `defaultName`).
    static func sender(_ text: String, defaultName: String) throws -> MailAddress {
        if let open = text.lastIndex(of: "<"), text.hasSuffix(">") {
            let name = text[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return try MailAddress(String(text[text.index(after: open)..<text.index(before: text.endIndex)]), displayName: name.isEmpty ? defaultName : name)
        }
        return try MailAddress(text, displayName: defaultName)
    }
}
