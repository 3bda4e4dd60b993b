public import Foundation

/// An email address with an optional display name, as one mailbox of a `From` or `To` header.
///
/// The address itself must already be valid (the server's input rules check it); this type only refuses what would
/// break the message or the SMTP envelope: line breaks, angle brackets, NUL and other control characters.
public struct MailAddress: Sendable, Hashable {
    /// `local@domain`, as it goes into the SMTP envelope.
    public var address: String
    /// A name shown beside the address (`Touchstone <no-reply@example.com>`); encoded as RFC 2047 words when not ASCII.
    public var displayName: String?

    /// - Throws: ``MailError/invalidAddress`` when `address` has no `@`, is longer than 254 characters (code points, as
    ///   the server's address rule counts them) or than 986 bytes (an SMTP command line, RFC 5321 §4.5.3.1.4, with
    ///   `RCPT TO:<>`), or holds a control character, white space or an angle bracket; ``MailError/invalidHeader`` for a control character in the name.
    public init(_ address: String, displayName: String? = nil) throws(MailError) {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[parts.count - 1].isEmpty,
            address.unicodeScalars.count <= 254, address.utf8.count <= 986,
            !address.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.isWhitespace || $0 == "<" || $0 == ">" })
        else {
            throw .invalidAddress
        }
        if let displayName {
            try MailHeader.checkValue(displayName)
        }
        self.address = address
        self.displayName = displayName.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the address needs an SMTP server that accepts internationalised addresses (RFC 6531, `SMTPUTF8`).
    public var needsUTF8: Bool { !self.address.utf8.allSatisfy { $0 < 0x80 } }

    /// The domain part, after the last `@`.
    public var domain: Substring { self.address[self.address.index(after: self.address.lastIndex(of: "@")!)...] }

    /// The mailbox as a header shows it: `Name <address>` (the name quoted or encoded as needed) or `<address>`.
    var headerValue: String {
        guard let displayName else { return "<\(self.address)>" }
        return "\(MailHeader.phrase(displayName)) <\(self.address)>"
    }
}

/// A mail to send: the sender, the recipient, a subject and a body in plain text and, optionally, HTML.
///
/// ``rendered(date:messageID:boundary:)`` writes it as an RFC 5322 message with MIME parts (RFC 2045/2046):
/// `multipart/alternative` with the text first and the HTML second (the last part is the preferred one), each
/// quoted-printable in UTF-8, so the message is 7-bit clean and any SMTP server relays it.
public struct MailMessage: Sendable, Hashable {
    public var from: MailAddress
    public var to: MailAddress
    public var subject: String
    public var text: String
    public var html: String?

    /// - Throws: ``MailError/invalidHeader`` when the subject holds a control character (a line break would start a
    ///   header of the sender's choosing).
    public init(from: MailAddress, to: MailAddress, subject: String, text: String, html: String? = nil) throws(MailError) {
        try MailHeader.checkValue(subject)
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
    }

    /// The message as it is sent in SMTP's `DATA` (before dot-stuffing) and written to `.eml` files: CRLF line ends,
    /// every line at most 78 characters.
    ///
    /// - Parameters:
    ///   - date: The `Date` header's instant (shown in UTC).
    ///   - messageID: The `Message-ID` without angle brackets, unique per message: `<random>@<sender's domain>`.
    ///   - boundary: The MIME boundary; it must not occur in the encoded parts (quoted-printable output never contains
    ///     `=_`, so a boundary that starts with `=_` is safe).
    public func rendered(date: Date, messageID: String, boundary: String) -> String {
        var headers: [(String, String)] = [
            ("Date", MailHeader.date(date)),
            ("From", self.from.headerValue),
            ("To", self.to.headerValue),
            ("Subject", MailHeader.unstructured(self.subject)),
            ("Message-ID", "<\(messageID)>"),
            // RFC 3834: an automatic message; auto-responders should not answer it.
            ("Auto-Submitted", "auto-generated"),
            ("MIME-Version", "1.0"),
        ]
        var body: String
        if let html = self.html {
            headers.append(("Content-Type", "multipart/alternative; boundary=\"\(boundary)\""))
            body = "--\(boundary)\r\n"
            body += Self.part(type: "text/plain", self.text)
            body += "--\(boundary)\r\n"
            body += Self.part(type: "text/html", html)
            body += "--\(boundary)--\r\n"
        } else {
            headers.append(("Content-Type", "text/plain; charset=utf-8"))
            headers.append(("Content-Transfer-Encoding", "quoted-printable"))
            body = QuotedPrintable.encode(self.text) + "\r\n"
        }
        var message = ""
        for (name, value) in headers {
            message += MailHeader.fold("\(name): \(value)") + "\r\n"
        }
        return message + "\r\n" + body
    }

    private static func part(type: String, _ content: String) -> String {
        "Content-Type: \(type); charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            + QuotedPrintable.encode(content) + "\r\n"
    }
}

/// Why a message or an address was refused.
public struct MailError: Error, Hashable, CustomStringConvertible {
    private enum Code: Hashable { case invalidAddress, invalidHeader }
    private let code: Code

    /// Not an address that can go into an envelope or a header.
    public static let invalidAddress = MailError(code: .invalidAddress)
    /// A header value with a control character (a line break would start another header).
    public static let invalidHeader = MailError(code: .invalidHeader)

    public var description: String {
        switch self.code {
        case .invalidAddress: "not a valid email address"
        case .invalidHeader: "a mail header must not contain control characters"
        }
    }
}
