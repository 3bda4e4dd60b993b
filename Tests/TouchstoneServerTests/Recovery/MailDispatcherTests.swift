import Crypto
import Foundation
import Logging
import Testing
import TouchstoneMail
import TouchstoneStore
import TouchstoneTesting

@testable import TouchstoneServer

/// The mail queue's sender, driven directly: what is stored, the retries, giving up, and the templates.
struct MailDispatcherTests {
    static func setUp(clock: ManualClock, mailbox: TestMailbox) async throws -> (MailDispatcher, Mailer, any TouchstoneStore) {
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        let key = SymmetricKey(size: .bits256)
        var configuration = TouchstoneConfiguration()
        configuration.passkeys.rpName = "Zürich Bank"
        configuration.mail.publicURL = "https://bank.example.com"
        var dependencies = TouchstoneDependencies.live
        dependencies.now = { clock.now }
        let mailer = try makeMailer(configuration, keyEncryptionKey: key, dependencies: dependencies)
        let dispatcher = MailDispatcher(
            store: store, keyEncryptionKey: key, transport: mailbox, logger: Logger(label: "test"), metrics: nil,
            now: { clock.now }, randomBytes: dependencies.randomBytes)
        return (dispatcher, mailer, store)
    }

    @Test func theQueueHoldsNothingInClearAndASentMailIsDeleted() async throws {
        let clock = ManualClock()
        let mailbox = TestMailbox()
        let (dispatcher, mailer, store) = try await Self.setUp(clock: clock, mailbox: mailbox)
        let mail = try mailer.prepare(.signInCode, to: "jo@example.org", values: ["code": "493817", "validFor": "10 minutes"])
        try await store.enqueueMail(mail)
        let stored = String(decoding: mail.sealedMessage, as: UTF8.self)
        #expect(!stored.contains("493817") && !stored.contains("jo@example.org"))
        #expect(try await dispatcher.sendDue() == 1)
        let sent = try #require(mailbox.mails.first)
        #expect(sent.code == "493817")
        #expect(sent.from == "no-reply@bank.example.com")
        #expect(sent.data.contains("From: =?UTF-8?B?"))
        #expect(try await store.mailQueueStatistics() == MailQueueStatistics(pending: 0, failed: 0, oldestPendingAt: nil))
    }

    @Test func failuresAreRetriedOnTheScheduleThenGivenUp() async throws {
        let clock = ManualClock()
        let mailbox = TestMailbox()
        let (dispatcher, mailer, store) = try await Self.setUp(clock: clock, mailbox: mailbox)
        try await store.enqueueMail(try mailer.prepare(.passwordChanged, to: "jo@example.org", values: ["how": "changed"]))
        mailbox.fail(next: 100, with: SMTPError(.connection, "connection refused"))
        #expect(try await dispatcher.sendDue() == 1)
        for delay in MailDispatcher.retryDelays {
            // Not before its time.
            clock.advance(by: delay - 1)
            #expect(try await dispatcher.sendDue() == 0)
            clock.advance(by: 1)
            #expect(try await dispatcher.sendDue() == 1)
        }
        // Eleven attempts over the delays (28 h): given up, its message deleted.
        let statistics = try await store.mailQueueStatistics()
        #expect(statistics.pending == 0 && statistics.failed == 1)
        clock.advance(by: 86_400)
        #expect(try await dispatcher.sendDue() == 0)
    }

    @Test func aPermanentRefusalIsGivenUpAtOnceATransientOneIsNot() async throws {
        let clock = ManualClock()
        let mailbox = TestMailbox()
        let (dispatcher, mailer, store) = try await Self.setUp(clock: clock, mailbox: mailbox)
        try await store.enqueueMail(try mailer.prepare(.passwordChanged, to: "gone@example.org", values: ["how": "changed"]))
        clock.advance(by: 1)  // sent in creation order
        try await store.enqueueMail(try mailer.prepare(.passwordChanged, to: "busy@example.org", values: ["how": "changed"]))
        mailbox.fail(next: 1, with: SMTPError(.rejected, "the server refused the recipient", reply: SMTPReply(code: 550, lines: ["5.1.1 no such user"])))
        mailbox.fail(next: 1, with: SMTPError(.rejected, "the server refused the recipient", reply: SMTPReply(code: 450, lines: ["4.2.1 busy"])))
        #expect(try await dispatcher.sendDue() == 2)
        #expect(try await store.mailQueueStatistics().failed == 1)
        clock.advance(by: 30)
        #expect(try await dispatcher.sendDue() == 1)
        #expect(mailbox.mails.map(\.to) == ["busy@example.org"])
    }

    @Test(arguments: MailKind.allCases)
    func everyTemplateRendersWithASubjectTextAndHTML(kind: MailKind) throws {
        let rendered = try #require(MailTemplates().render(kind, [
            "product": "A <b>Bank</b>", "email": "jo@example.org", "code": "123456", "link": "https://x.example/#a=b&c",
            "validFor": "10 minutes", "how": "changed", "home": "https://x.example/", "sentAt": "2026-11-26 12:30 UTC",
        ]))
        #expect(!rendered.subject.isEmpty && !rendered.subject.contains("\n"))
        #expect(rendered.text.contains("jo@example.org"))
        // Values are escaped in HTML and not in text.
        #expect(rendered.html.contains("A &lt;b&gt;Bank&lt;/b&gt;") && !rendered.html.contains("<b>Bank"))
        #expect(rendered.text.contains("A <b>Bank</b>") || rendered.subject.contains("A <b>Bank</b>"))
        #expect(rendered.html.hasPrefix("<!doctype html>"))
    }

    @Test func postgresWithoutSMTPNeedsAMailFolderAndSQLiteDefaultsBesideTheDatabase() throws {
        var configuration = TouchstoneConfiguration()
        configuration.database = .postgres(url: "postgres://touchstone@127.0.0.1:1/touchstone")
        #expect(throws: ConfigurationError.self) { try makeMailTransport(configuration, dependencies: .live) }
        let folder = TemporaryFiles.path("touchstone-mail-dir")
        defer { TemporaryFiles.remove(folder) }
        configuration.mail.directory = folder
        let (_, line) = try makeMailTransport(configuration, dependencies: .live)
        #expect(line.contains(folder) && FileManager.default.fileExists(atPath: folder))
        configuration.mail.directory = nil
        let database = TemporaryFiles.path("touchstone-mail-db")
        defer { TemporaryFiles.remove(database) }
        configuration.database = .sqliteFile(path: database + "/x.sqlite")
        let (_, beside) = try makeMailTransport(configuration, dependencies: .live)
        #expect(beside.hasSuffix(database + "/touchstone-mail"))
    }

    @Test func aDirectoryTransportWritesPrivateEmlFiles() async throws {
        let folder = TemporaryFiles.path("touchstone-eml")
        defer { TemporaryFiles.remove(folder) }
        let transport = try DirectoryTransport(directory: folder)
        let mail = OutgoingMail(id: "m1", kind: "verify_email", from: "a@b.c", to: "d@e.f", data: "Subject: x\r\n\r\nbody\r\n", createdAt: Date(timeIntervalSince1970: 1_795_696_244))
        try await transport.deliver(mail)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(names == ["20261126123044000-verify_email-m1.eml"])
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + names[0])
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try String(contentsOfFile: folder + "/" + names[0], encoding: .utf8) == mail.data)
    }

    @Test func durationsInWords() {
        #expect(Mailer.duration(900) == "15 minutes")
        #expect(Mailer.duration(60) == "1 minute")
        #expect(Mailer.duration(3600) == "1 hour")
        #expect(Mailer.duration(86_400) == "24 hours")
    }
}
