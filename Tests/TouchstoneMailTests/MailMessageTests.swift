import Foundation
import NIOCore
import NIOEmbedded
import Testing
@testable import TouchstoneMail

@Suite struct MailMessageTests {
    static let date = Date(timeIntervalSince1970: 1_795_696_244)  // 2026-11-26 12:30:44 UTC, a Thursday

    func message(subject: String = "Your code", text: String = "Hello", html: String? = "<p>Hello</p>", name: String? = "Touchstone") throws -> MailMessage {
        try MailMessage(
            from: MailAddress("no-reply@example.com", displayName: name),
            to: MailAddress("someone@example.org"),
            subject: subject,
            text: text,
            html: html
        )
    }

    /// Undoes quoted-printable (RFC 2045 §6.7), for checking the encoder.
    static func decodeQuotedPrintable(_ text: String) -> String {
        var bytes: [UInt8] = []
        let lines = text.components(separatedBy: "\r\n")
        for (index, line) in lines.enumerated() {
            var chars = Array(line.utf8)
            let soft = chars.last == UInt8(ascii: "=")
            if soft { chars.removeLast() }
            var i = 0
            while i < chars.count {
                if chars[i] == UInt8(ascii: "="), i + 2 < chars.count + 0, let byte = UInt8(String(decoding: chars[i + 1...i + 2], as: UTF8.self), radix: 16) {
                    bytes.append(byte)
                    i += 3
                } else {
                    bytes.append(chars[i])
                    i += 1
                }
            }
            if !soft && index < lines.count - 1 { bytes += Array("\n".utf8) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func headersAndParts() throws {
        let rendered = try self.message().rendered(date: Self.date, messageID: "abc@example.com", boundary: "=_b1")
        let (head, body) = try #require(rendered.range(of: "\r\n\r\n").map { (rendered[..<$0.lowerBound], rendered[$0.upperBound...]) })
        #expect(head.contains("Date: Thu, 26 Nov 2026 12:30:44 +0000"))
        #expect(head.contains("From: \"Touchstone\" <no-reply@example.com>"))
        #expect(head.contains("To: <someone@example.org>"))
        #expect(head.contains("Subject: Your code"))
        #expect(head.contains("Message-ID: <abc@example.com>"))
        #expect(head.contains("MIME-Version: 1.0"))
        #expect(head.contains("Content-Type: multipart/alternative; boundary=\"=_b1\""))
        #expect(body.hasPrefix("--=_b1\r\nContent-Type: text/plain; charset=utf-8\r\n"))
        #expect(body.contains("--=_b1\r\nContent-Type: text/html; charset=utf-8\r\n"))
        #expect(body.hasSuffix("--=_b1--\r\n"))
        // Every line ends with CRLF and is 7-bit.
        #expect(!rendered.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(rendered.utf8.allSatisfy { $0 < 0x80 })
    }

    @Test func plainTextOnly() throws {
        let rendered = try self.message(html: nil).rendered(date: Self.date, messageID: "a@b.c", boundary: "=_x")
        #expect(rendered.contains("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nHello\r\n"))
        #expect(!rendered.contains("multipart"))
    }

    @Test func nonASCIISubjectAndNameAreEncodedWords() throws {
        let subject = "Votre code de connexion à Zürich Bank — ne le partagez avec personne, même pas avec nous 🔐"
        let rendered = try self.message(subject: subject, name: "Zürich Bank").rendered(date: Self.date, messageID: "a@b.c", boundary: "=_x")
        let head = String(rendered[..<rendered.range(of: "\r\n\r\n")!.lowerBound])
        // Unfold, then decode every encoded word and join adjacent ones (RFC 2047 §6.2).
        let unfolded = head.replacingOccurrences(of: "\r\n ", with: " ")
        let subjectLine = try #require(unfolded.components(separatedBy: "\r\n").first { $0.hasPrefix("Subject: ") })
        let words = subjectLine.dropFirst("Subject: ".count).split(separator: " ")
        let decoded = words.map { word -> String in
            #expect(word.count <= 75)
            #expect(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?="))
            let base64 = word.dropFirst(10).dropLast(2)
            return String(decoding: Data(base64Encoded: String(base64))!, as: UTF8.self)
        }.joined()
        #expect(decoded == subject)
        #expect(head.contains("From: =?UTF-8?B?WsO8cmljaCBCYW5r?= <no-reply@example.com>"))
        for line in head.components(separatedBy: "\r\n") { #expect(line.utf8.count <= 78) }
        // The value starts on the header's own line: a fold right after the name reads as a leading space.
        #expect(head.contains("\r\nSubject: =?UTF-8?B?"))
    }

    @Test func displayNameQuotesAreEscaped() throws {
        let rendered = try self.message(name: "The \"Bank\" \\ Co").rendered(date: Self.date, messageID: "a@b.c", boundary: "=_x")
        #expect(rendered.contains("From: \"The \\\"Bank\\\" \\\\ Co\" <no-reply@example.com>"))
    }

    @Test(arguments: ["Hi\r\nBcc: victim@example.org", "Hi\nX: y", "Hi\u{0}", "Hi\u{2028}there"])
    func headerInjectionIsRefused(_ subject: String) throws {
        #expect(throws: MailError.invalidHeader) { try self.message(subject: subject) }
        #expect(throws: MailError.invalidHeader) { try MailAddress("a@example.com", displayName: subject) }
    }

    @Test(arguments: ["a@b", "no-at-sign", "@example.com", "a@", "a b@example.com", "a@example.com>\r\nRCPT TO:<x@y.z", "<a@example.com>", String(repeating: "a", count: 250) + "@b.cd"])
    func badAddressesAreRefused(_ address: String) {
        if address == "a@b" {
            #expect((try? MailAddress(address)) != nil)  // the envelope rules are the server's; `a@b` is a valid form
        } else {
            #expect(throws: MailError.invalidAddress) { try MailAddress(address) }
        }
    }

    @Test func quotedPrintableRoundTripsAndStaysShort() {
        let text = """
            Bonjour Zoë,
            .a line starting with a dot
            From here on
            trailing space \t
            = signs = everywhere ==
            \(String(repeating: "long ", count: 40))
            ✓ 日本語 🎉
            """
        let encoded = QuotedPrintable.encode(text)
        for line in encoded.components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= 76)
            #expect(!line.hasPrefix("."))
            #expect(!line.hasPrefix("From "))
            #expect(!line.hasSuffix(" ") && !line.hasSuffix("\t"))
        }
        #expect(encoded.utf8.allSatisfy { $0 < 0x80 })
        #expect(!encoded.contains("=_"))
        #expect(Self.decodeQuotedPrintable(encoded) == text)
    }

    @Test func theDateIsRFC5322() {
        #expect(MailHeader.date(Date(timeIntervalSince1970: 0)) == "Thu, 1 Jan 1970 00:00:00 +0000")
        #expect(MailHeader.date(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 +0000")
    }
}

@Suite struct SMTPServerURLTests {
    @Test func defaultsAndForms() throws {
        let submission = try SMTPServer(url: "smtp://user%40corp:p%40ss%3Aword@mail.example.com")
        #expect(submission == SMTPServer(host: "mail.example.com", port: 587, security: .startTLS, username: "user@corp", password: "p@ss:word"))
        #expect(try SMTPServer(url: "smtps://mail.example.com").port == 465)
        #expect(try SMTPServer(url: "smtps://mail.example.com").security == .implicitTLS)
        #expect(try SMTPServer(url: "smtp://127.0.0.1:2525?starttls=off") == SMTPServer(host: "127.0.0.1", port: 2525, security: .none))
        #expect(try SMTPServer(url: "smtp://[::1]:25?starttls=off").host == "::1")
        #expect(try SMTPServer(url: "SMTP://relay:25?starttls=on").security == .startTLS)
    }

    @Test(arguments: [
        "http://mail.example.com",
        "smtp://",
        "smtp://mail.example.com:0",
        "smtp://mail.example.com/path",
        "smtp://mail.example.com?tls=off",
        "smtps://mail.example.com?starttls=off",
        "smtp://mail.example.com?starttls=maybe",
        "smtp://user:pass@mail.example.com?starttls=off",
        "smtp://:pass@mail.example.com",
        "not a url at all",
    ])
    func refused(_ url: String) {
        #expect(throws: SMTPServerURLError.self) { try SMTPServer(url: url) }
    }

    @Test func descriptionHasNoPassword() throws {
        let server = try SMTPServer(url: "smtp://mailer:hunter2@mail.example.com:2587")
        #expect(server.description == "smtp://mail.example.com:2587 (STARTTLS, as mailer)")
        let error = #expect(throws: SMTPServerURLError.self) { try SMTPServer(url: "smtp://mailer:hunter2@mail.example.com?starttls=off") }
        #expect(error.map { !"\($0)".contains("hunter2") } ?? false)
    }
}

@Suite struct SMTPReplyDecoderTests {
    func decode(_ text: String) throws -> [SMTPReply] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(SMTPReplyDecoder()))
        try channel.writeInbound(channel.allocator.buffer(string: text))
        var replies: [SMTPReply] = []
        while let reply = try channel.readInbound(as: SMTPReply.self) { replies.append(reply) }
        return replies
    }

    @Test func singleAndMultiline() throws {
        let replies = try self.decode("220 ready\r\n250-hello\r\n250-PIPELINING\r\n250 SIZE 100\r\n354\r\n235 ok\n")
        #expect(replies == [
            SMTPReply(code: 220, lines: ["ready"]),
            SMTPReply(code: 250, lines: ["hello", "PIPELINING", "SIZE 100"]),
            SMTPReply(code: 354, lines: [""]),
            SMTPReply(code: 235, lines: ["ok"]),
        ])
    }

    @Test(arguments: ["hello\r\n", "250-a\r\n354 b\r\n", "25\r\n", "250*x\r\n", "650 no\r\n", String(repeating: "2", count: 3000)])
    func malformedRepliesFail(_ text: String) {
        #expect(throws: SMTPError.self) { try self.decode(text) }
    }

    @Test func tooManyLinesFail() {
        #expect(throws: SMTPError.self) { try self.decode(String(repeating: "250-x\r\n", count: 101)) }
    }
}
