import Crypto
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TouchstoneMail
import TouchstoneStore

/// Mail (issue #33): the queue's sender. Features queue mail through ``ServerCore/mailer`` in the unit of work of the
/// change that causes it; this feature sends it.
struct MailFeature: Feature {
    let dispatcher: MailDispatcher
    let signal: WakeSignal

    init(core: ServerCore, transport: any MailTransport, keyEncryptionKey: SymmetricKey) {
        self.signal = core.mailer.signal
        self.dispatcher = MailDispatcher(
            store: core.store,
            keyEncryptionKey: keyEncryptionKey,
            transport: transport,
            logger: core.logger,
            metrics: core.audit.metrics,
            now: core.now,
            randomBytes: core.dependencies.randomBytes,
            leaseDuration: core.configuration.mail.lease
        )
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {}

    var services: [any Service] { [MailDispatchService(dispatcher: self.dispatcher, signal: self.signal)] }
}

/// The transport the configuration names, and a line for the log saying where mail goes.
///
/// - Throws: ``ConfigurationError`` on PostgreSQL with neither `TOUCHSTONE_SMTP_URL` nor `TOUCHSTONE_MAIL_DIR` (each
///   instance would keep its own folder of mail), or when the folder cannot be made.
func makeMailTransport(_ configuration: TouchstoneConfiguration, dependencies: TouchstoneDependencies) throws -> (any MailTransport, String) {
    if let injected = dependencies.mailTransport { return (injected, "mail: an injected transport") }
    let settings = configuration.mail
    if let server = settings.smtp {
        let host = URL(string: configuration.mailPublicURL)?.host ?? "localhost"
        do {
            return (try SMTPTransport(settings: settings, server: server, heloName: host), "mail: sent through \(server)")
        } catch {
            throw ConfigurationError("TOUCHSTONE_SMTP_CA_FILE", settings.smtpCAFile ?? "")
        }
    }
    let directory: String
    if let configured = settings.directory {
        directory = configured
    } else {
        switch configuration.database {
        case .sqliteFile(let path):
            directory = ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("touchstone-mail")
        case .sqliteMemory:
            directory = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent("touchstone-mail")
        case .postgres:
            throw ConfigurationError("TOUCHSTONE_MAIL_DIR", "unset on PostgreSQL without TOUCHSTONE_SMTP_URL (set one of them)")
        }
    }
    let absolute = directory.hasPrefix("/") ? directory : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(directory)
    do {
        return (try DirectoryTransport(directory: absolute), "mail: no SMTP server configured (TOUCHSTONE_SMTP_URL); mails are written to \(absolute)")
    } catch {
        throw ConfigurationError("TOUCHSTONE_MAIL_DIR", absolute)
    }
}

extension TouchstoneConfiguration {
    /// The web page's address for links in mail: `TOUCHSTONE_PUBLIC_URL`, else the issuer.
    var mailPublicURL: String {
        let url = self.mail.publicURL ?? self.tokens.resolvedIssuer(port: self.port)
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}

/// The mailer of a configuration: the sender (`TOUCHSTONE_MAIL_FROM`, by default `no-reply@` the public URL's host,
/// named after the relying party), the links' base and the templates.
func makeMailer(_ configuration: TouchstoneConfiguration, keyEncryptionKey: SymmetricKey, dependencies: TouchstoneDependencies) throws -> Mailer {
    let publicURL = configuration.mailPublicURL
    let host = URL(string: publicURL)?.host ?? "localhost"
    let sender: MailAddress
    do {
        sender = try MailSettings.sender(configuration.mail.from ?? "no-reply@\(host)", defaultName: configuration.passkeys.rpName)
    } catch {
        throw ConfigurationError("TOUCHSTONE_MAIL_FROM", configuration.mail.from ?? "no-reply@\(host)")
    }
    return Mailer(
        sender: sender,
        product: configuration.passkeys.rpName,
        publicURL: publicURL,
        templates: MailTemplates(),
        keyEncryptionKey: keyEncryptionKey,
        secrets: Secrets(randomBytes: dependencies.randomBytes),
        now: dependencies.now,
        signal: WakeSignal()
    )
}
