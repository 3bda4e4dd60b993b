import Crypto
import Foundation
import NIOConcurrencyHelpers
import TouchstoneCrypto
import TouchstoneMail
import TouchstoneStore

/// Writes mails into the queue (issue #33): renders the template, seals the message under the key-encryption key
/// (the mail id as associated data) and returns the row for the caller's unit of work, so the mail is queued if and
/// only if the change that causes it commits. ``committed()`` then wakes the sender.
struct Mailer: Sendable {
    let sender: MailAddress
    let product: String
    /// Where links point: the web page (`TOUCHSTONE_PUBLIC_URL`, by default the issuer), without a trailing `/`.
    let publicURL: String
    let templates: MailTemplates
    let keyEncryptionKey: SymmetricKey
    let secrets: Secrets
    let now: @Sendable () -> Date
    let signal: WakeSignal

    /// What is sealed: the envelope and the message.
    struct Sealed: Codable, Sendable, Hashable {
        var from: String
        var to: String
        var data: String
    }

    static func context(_ id: String) -> [UInt8] { Array("mail:\(id)".utf8) }

    /// A link to the web page with `fragment` (`verify-email=<token>`): the token travels after `#`, which browsers
    /// never send to a server, so it appears in no access log; the page asks before it acts.
    func link(_ fragment: String) -> String { "\(self.publicURL)/#\(fragment)" }

    /// A queued mail of `kind` to `address`.
    ///
    /// - Throws: when the template is missing (a build defect) or the address cannot go into a header.
    func prepare(_ kind: MailKind, to address: String, values: [String: String]) throws -> QueuedMailRecord {
        let id = self.secrets.newIdentifier()
        let now = self.now()
        var values = values
        values["product"] = self.product
        values["email"] = address
        values["home"] = self.publicURL + "/"
        values["sentAt"] = MailClock.text(now)
        guard let rendered = self.templates.render(kind, values) else { throw MailerError("the template \(kind.rawValue) is missing") }
        let message = try MailMessage(
            from: self.sender,
            to: MailAddress(address),
            subject: rendered.subject,
            text: rendered.text,
            html: rendered.html
        )
        let data = message.rendered(
            date: now,
            messageID: "\(id)@\(self.sender.domain)",
            boundary: "=_\(Base64.urlEncode(self.secrets.randomBytes(12)))"
        )
        let sealed = try KeySealing.seal(
            Array(try JSONEncoder().encode(Sealed(from: self.sender.address, to: address, data: data))),
            key: self.keyEncryptionKey,
            context: Self.context(id)
        )
        return QueuedMailRecord(id: id, kind: kind.rawValue, sealedMessage: sealed, createdAt: now)
    }

    /// Opens a queued mail.
    static func open(_ mail: QueuedMailRecord, keyEncryptionKey: SymmetricKey) throws -> Sealed {
        let plain = try KeySealing.open(mail.sealedMessage, key: keyEncryptionKey, context: Self.context(mail.id))
        return try JSONDecoder().decode(Sealed.self, from: Data(plain))
    }

    /// Wakes the sender after the unit of work that queued mail committed.
    func committed() { self.signal.wake() }

    /// How long something stays valid, in words for a mail: "15 minutes", "1 hour", "24 hours".
    static func duration(_ interval: TimeInterval) -> String {
        let minutes = Int((interval / 60).rounded())
        if minutes % 60 == 0 && minutes >= 60 { return minutes == 60 ? "1 hour" : "\(minutes / 60) hours" }
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }
}

struct MailerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A time as mails show it: `2026-11-26 12:30 UTC`.
enum MailClock {
    static func text(_ date: Date) -> String {
        let rfc = date.rfc3339
        return "\(rfc.prefix(10)) \(rfc.dropFirst(11).prefix(5)) UTC"
    }
}
