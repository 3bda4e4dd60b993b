import Foundation
import NIOCore
import NIOSSL
import Testing
@testable import TouchstoneMail

@Suite struct SMTPClientTests {
    static let data = "Subject: hi\r\n\r\nline one\r\n.starts with a dot\r\n..two dots\r\nlast"

    func client(_ server: ScriptedSMTPServer, security: SMTPServer.Security = .none, user: String? = nil, password: String? = nil, reply: TimeAmount = .seconds(5)) throws -> SMTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try server.trustRoot])
        var timeouts = SMTPClient.Timeouts()
        timeouts.reply = reply
        timeouts.dataAccepted = reply
        return SMTPClient(
            server: SMTPServer(host: "localhost", port: server.port, security: security, username: user, password: password),
            heloName: "touchstone.test",
            tls: tls,
            timeouts: timeouts
        )
    }

    @Test func deliversWithDotStuffing() async throws {
        let server = try await ScriptedSMTPServer()
        defer { Task { await server.stop() } }
        let reply = try await self.client(server).send(from: "no-reply@example.com", to: ["a@example.org"], data: Self.data)
        #expect(reply.code == 250)
        let message = try #require(server.messages.first)
        #expect(message.from == "no-reply@example.com")
        #expect(message.to == ["a@example.org"])
        // The server undoes nothing; what it received is the stuffed text, as RFC 5321 §4.5.2 sends it.
        #expect(message.data == "Subject: hi\r\n\r\nline one\r\n..starts with a dot\r\n...two dots\r\nlast\r\n")
        #expect(server.transcript.first == "EHLO touchstone.test")
        #expect(server.transcript.last == "QUIT")
    }

    @Test func pipelinesTheEnvelopeWhenOffered() async throws {
        // The server answers MAIL and RCPT only once DATA has arrived: a client that waited would time out.
        let server = try await ScriptedSMTPServer(.init(pipelining: true))
        defer { Task { await server.stop() } }
        try await self.client(server, reply: .seconds(2)).send(from: "f@example.com", to: ["a@example.org", "b@example.org"], data: "x")
        #expect(server.messages.first?.to == ["a@example.org", "b@example.org"])
    }

    @Test func startTLSThenAuthPlain() async throws {
        let server = try await ScriptedSMTPServer(.init(startTLS: true, auth: ["PLAIN", "LOGIN"]))
        defer { Task { await server.stop() } }
        try await self.client(server, security: .startTLS, user: "mailer", password: "s3cret pass").send(from: "f@example.com", to: ["a@example.org"], data: "x")
        #expect(server.messages.count == 1)
        // EHLO twice: RFC 3207 §4.2 discards what was learnt before TLS.
        #expect(server.transcript.filter { $0.hasPrefix("EHLO") }.count == 2)
        #expect(server.transcript.contains("STARTTLS"))
    }

    @Test func authLoginWhenPlainIsNotOffered() async throws {
        let server = try await ScriptedSMTPServer(.init(implicitTLS: true, auth: ["LOGIN"]))
        defer { Task { await server.stop() } }
        try await self.client(server, security: .implicitTLS, user: "mailer", password: "s3cret pass").send(from: "f@example.com", to: ["a@example.org"], data: "x")
        #expect(server.messages.count == 1)
        #expect(server.transcript.contains("AUTH LOGIN"))
    }

    @Test func wrongCredentialsAreAnAuthenticationError() async throws {
        let server = try await ScriptedSMTPServer(.init(startTLS: true, auth: ["PLAIN"]))
        defer { Task { await server.stop() } }
        let error = await #expect(throws: SMTPError.self) {
            try await self.client(server, security: .startTLS, user: "mailer", password: "wrong").send(from: "f@example.com", to: ["a@example.org"], data: "x")
        }
        #expect(error?.kind == .authentication)
        #expect(error?.isPermanent == false)
        #expect(error.map { !"\($0)".contains("wrong") } ?? false)
        #expect(server.messages.isEmpty)
    }

    @Test func requiredStartTLSThatIsNotOfferedIsRefused() async throws {
        let server = try await ScriptedSMTPServer(.init(startTLS: false))
        defer { Task { await server.stop() } }
        let error = await #expect(throws: SMTPError.self) {
            try await self.client(server, security: .startTLS).send(from: "f@example.com", to: ["a@example.org"], data: "x")
        }
        #expect(error?.kind == .startTLSUnavailable)
        #expect(!server.transcript.contains { $0.hasPrefix("MAIL") })
    }

    @Test func anUntrustedCertificateFailsTLS() async throws {
        let server = try await ScriptedSMTPServer(.init(startTLS: true))
        defer { Task { await server.stop() } }
        var client = try self.client(server, security: .startTLS)
        client.tls = .makeClientConfiguration()  // the system's roots: the test certificate is not among them
        let error = await #expect(throws: SMTPError.self) { try await client.send(from: "f@example.com", to: ["a@example.org"], data: "x") }
        #expect(error?.kind == .tls, "\(String(describing: error))")
        #expect(server.messages.isEmpty)
    }

    @Test(arguments: [
        ("RCPT", "550 5.1.1 no such user", true),
        ("RCPT", "450 4.2.1 mailbox busy", false),
        ("MAIL", "451 4.3.0 try later", false),
        (".", "554 5.7.1 rejected as spam", true),
        ("DATA", "554 5.5.1 no", true),
    ])
    func refusalsAreClassified(command: String, reply: String, permanent: Bool) async throws {
        let server = try await ScriptedSMTPServer(.init(overrides: [command: reply]))
        defer { Task { await server.stop() } }
        let error = await #expect(throws: SMTPError.self) {
            try await self.client(server).send(from: "f@example.com", to: ["a@example.org"], data: "x")
        }
        #expect(error?.kind == .rejected)
        #expect(error?.reply?.code == Int(reply.prefix(3)))
        #expect(error?.isPermanent == permanent)
    }

    @Test func aRefusedRecipientWithPipeliningEndsTheWaitingData() async throws {
        let server = try await ScriptedSMTPServer(.init(pipelining: true, overrides: ["RCPT": "550 5.1.1 no such user"]))
        defer { Task { await server.stop() } }
        let error = await #expect(throws: SMTPError.self) {
            try await self.client(server, reply: .seconds(2)).send(from: "f@example.com", to: ["a@example.org"], data: "x")
        }
        #expect(error?.reply?.code == 550)
        #expect(server.messages.isEmpty)
    }

    @Test func aSilentServerTimesOut() async throws {
        let server = try await ScriptedSMTPServer(.init(silentOn: ["MAIL"]))
        defer { Task { await server.stop() } }
        let error = await #expect(throws: SMTPError.self) {
            var client = try self.client(server)
            client.timeouts.reply = .seconds(1)
            // The greeting and EHLO are answered: only MAIL waits for the (short) reply timeout.
            client.timeouts.connect = .seconds(10)
            try await client.send(from: "f@example.com", to: ["a@example.org"], data: "x")
        }
        #expect(error?.kind == .timeout, "\(String(describing: error))")
        #expect(error?.isPermanent == false)
    }

    @Test func aRefusedGreetingOrNoServer() async throws {
        let server = try await ScriptedSMTPServer(.init(greeting: "554 5.3.2 go away"))
        let error = await #expect(throws: SMTPError.self) { try await self.client(server).send(from: "f@example.com", to: ["a@example.org"], data: "x") }
        #expect(error?.reply?.code == 554)
        let port = server.port
        await server.stop()
        let closed = SMTPClient(server: SMTPServer(host: "127.0.0.1", port: port, security: .none))
        let refused = await #expect(throws: SMTPError.self) { try await closed.send(from: "f@example.com", to: ["a@example.org"], data: "x") }
        #expect(refused?.kind == .connection)
    }

    @Test func heloWhenEhloIsUnknown() async throws {
        let server = try await ScriptedSMTPServer(.init(ehlo: false))
        defer { Task { await server.stop() } }
        try await self.client(server).send(from: "f@example.com", to: ["a@example.org"], data: "x")
        #expect(server.transcript.contains("HELO touchstone.test"))
        #expect(server.messages.count == 1)
    }

    @Test func internationalisedAddressesNeedSMTPUTF8() async throws {
        let plain = try await ScriptedSMTPServer()
        defer { Task { await plain.stop() } }
        let error = await #expect(throws: SMTPError.self) { try await self.client(plain).send(from: "f@example.com", to: ["jörg@example.org"], data: "x") }
        #expect(error?.kind == .utf8Unsupported)
        #expect(error?.isPermanent == true)
        let utf8 = try await ScriptedSMTPServer(.init(smtpUTF8: true))
        defer { Task { await utf8.stop() } }
        try await self.client(utf8).send(from: "f@example.com", to: ["jörg@example.org"], data: "x")
        #expect(utf8.transcript.contains("MAIL FROM:<f@example.com> SMTPUTF8"))
    }

    @Test func aMessageOverTheServersSizeIsRefusedBeforeSending() async throws {
        let server = try await ScriptedSMTPServer(.init(size: 10))
        defer { Task { await server.stop() } }
        let error = await #expect(throws: SMTPError.self) {
            try await self.client(server).send(from: "f@example.com", to: ["a@example.org"], data: String(repeating: "x", count: 100))
        }
        #expect(error?.isPermanent == true)
        #expect(!server.transcript.contains { $0.hasPrefix("MAIL") })
    }
}
