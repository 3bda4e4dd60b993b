public import Foundation
import Logging
import NIOSSL
public import TouchstoneMail

/// Where a queued mail goes: an SMTP server or a folder of `.eml` files. Tests inject their own
/// (``TouchstoneDependencies/mailTransport``).
public protocol MailTransport: Sendable {
    /// Hands one mail over.
    ///
    /// - Throws: ``SMTPError`` (``SMTPError/isPermanent`` decides whether it is tried again) or any other error,
    ///   which is always tried again.
    func deliver(_ mail: OutgoingMail) async throws
}

/// A mail as the transport sees it: the envelope and the RFC 5322 text.
public struct OutgoingMail: Sendable, Hashable {
    public var id: String
    public var kind: String
    public var from: String
    public var to: String
    public var data: String
    public var createdAt: Date
}

/// Submits to the configured SMTP server (``SMTPClient``), one connection per mail.
struct SMTPTransport: MailTransport {
    let client: SMTPClient

    init(settings: MailSettings, server: SMTPServer, heloName: String) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = settings.smtpCAFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        }
        self.client = SMTPClient(server: server, heloName: heloName, tls: tls)
    }

    func deliver(_ mail: OutgoingMail) async throws {
        try await self.client.send(from: mail.from, to: [mail.to], data: mail.data)
    }
}

/// Writes each mail as `<time>-<kind>-<id>.eml` into a folder (readable by the server's user only: mails hold codes
/// and links); written to a temporary name and renamed, so a reader never sees half a mail.
struct DirectoryTransport: MailTransport {
    let directory: String

    /// Creates the folder (mode 0700) if it is missing.
    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func deliver(_ mail: OutgoingMail) async throws {
        let stamp = mail.createdAt.rfc3339.filter { $0.isNumber }.prefix(17)
        let name = "\(stamp)-\(mail.kind)-\(mail.id).eml"
        let final = (self.directory as NSString).appendingPathComponent(name)
        let temporary = (self.directory as NSString).appendingPathComponent(".\(name).tmp")
        guard FileManager.default.createFile(atPath: temporary, contents: Data(mail.data.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw MailerError("could not write \(temporary)")
        }
        do {
            if FileManager.default.fileExists(atPath: final) { try FileManager.default.removeItem(atPath: final) }
            try FileManager.default.moveItem(atPath: temporary, toPath: final)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }
}
