import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
import X509

/// An SMTP server on loopback for the client's tests: it speaks just enough of RFC 5321 to receive a message, with
/// switches for what it offers (STARTTLS, PIPELINING, AUTH, SMTPUTF8, SIZE) and for how it misbehaves (refusals,
/// silence). What the client sent is kept in ``transcript`` and ``messages``.
///
/// With `pipelining` on it holds its answers to `MAIL`, `RCPT` and `DATA` until it has all three, so a client that
/// waits for each answer before the next command never gets one (and times out): that is how the tests see that the
/// envelope was pipelined.
final class ScriptedSMTPServer: Sendable {
    struct Options: Sendable {
        var startTLS = false
        var implicitTLS = false
        var pipelining = false
        var auth: [String] = []
        var smtpUTF8 = false
        var size: Int?
        var ehlo = true
        /// Replies that replace the normal one for a command starting with the key (`"RCPT"`: `"550 5.1.1 no such user"`).
        var overrides: [String: String] = [:]
        /// Commands (by first word) the server never answers.
        var silentOn: Set<String> = []
        /// The greeting; a server may refuse with 554.
        var greeting = "220 test.example ESMTP ready"
        var user = "mailer"
        var password = "s3cret pass"
    }

    struct Received: Sendable, Hashable {
        var from: String
        var to: [String]
        var data: String
    }

    let options: Options
    let certificate: Certificate
    private let channel: any Channel
    private let state = NIOLockedValueBox<(transcript: [String], messages: [Received])>(([], []))

    var port: Int { self.channel.localAddress!.port! }
    var transcript: [String] { self.state.withLockedValue { $0.transcript } }
    var messages: [Received] { self.state.withLockedValue { $0.messages } }

    /// The server's certificate as a PEM trust root for the client.
    var trustRoot: NIOSSLCertificate {
        get throws { try NIOSSLCertificate(bytes: Array(try self.certificate.serializeAsPEM().pemString.utf8), format: .pem) }
    }

    init(_ options: Options = Options()) async throws {
        self.options = options
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(3600),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: .init(key)
        )
        self.certificate = certificate
        let pem = try certificate.serializeAsPEM().pemString
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
        )
        let context = try NIOSSLContext(configuration: tls)
        let state = self.state
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if options.implicitTLS {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(Session(options: options, tls: context, state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    func stop() async {
        try? await self.channel.close()
    }

    private struct LineDecoder: ByteToMessageDecoder {
        typealias InboundOut = String
        mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
            guard let index = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return .needMoreData }
            var line = buffer.readString(length: index - buffer.readerIndex + 1)!
            line.removeLast()
            if line.hasSuffix("\r") { line.removeLast() }
            context.fireChannelRead(Self.wrapInboundOut(line))
            return .continue
        }
    }

    private final class Session: ChannelInboundHandler {
        typealias InboundIn = String
        typealias OutboundOut = ByteBuffer

        let options: Options
        let tls: NIOSSLContext
        let state: NIOLockedValueBox<(transcript: [String], messages: [Received])>
        var tlsActive: Bool
        var authenticated = false
        var inData = false
        var loginStep = 0
        var envelope = Received(from: "", to: [], data: "")
        var held: [String] = []

        init(options: Options, tls: NIOSSLContext, state: NIOLockedValueBox<(transcript: [String], messages: [Received])>) {
            self.options = options
            self.tls = tls
            self.state = state
            self.tlsActive = options.implicitTLS
        }

        func channelActive(context: ChannelHandlerContext) {
            self.send(context, self.options.greeting)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let line = Self.unwrapInboundIn(data)
            if self.inData {
                if line == "." {
                    self.inData = false
                    self.state.withLockedValue { $0.messages.append(self.envelope) }
                    self.send(context, self.options.overrides["."] ?? "250 2.0.0 queued as 42")
                } else {
                    self.envelope.data += line + "\r\n"
                }
                return
            }
            self.state.withLockedValue { $0.transcript.append(line) }
            if self.loginStep > 0 {
                self.login(context, line)
                return
            }
            let verb = line.split(separator: " ").first.map { String($0).uppercased() } ?? ""
            let head = line.prefix(4).uppercased()
            if self.options.silentOn.contains(verb) { return }
            if let override = self.options.overrides.first(where: { head.hasPrefix($0.key) && $0.key != "." })?.value {
                self.answer(context, verb, override)
                return
            }
            switch verb {
            case "EHLO":
                guard self.options.ehlo else { return self.send(context, "502 5.5.1 EHLO not implemented") }
                var lines = ["250-test.example greets you"]
                if self.options.startTLS && !self.tlsActive { lines.append("250-STARTTLS") }
                if self.options.pipelining { lines.append("250-PIPELINING") }
                if !self.options.auth.isEmpty && self.tlsActive { lines.append("250-AUTH " + self.options.auth.joined(separator: " ")) }
                if self.options.smtpUTF8 { lines.append("250-SMTPUTF8") }
                if let size = self.options.size { lines.append("250-SIZE \(size)") }
                lines.append("250 8BITMIME")
                self.send(context, lines.joined(separator: "\r\n"))
            case "HELO":
                self.send(context, "250 test.example")
            case "STARTTLS":
                self.send(context, "220 2.0.0 go ahead")
                self.tlsActive = true
                try! context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: self.tls), position: .first)
            case "AUTH":
                let words = line.split(separator: " ").map(String.init)
                if words.count == 3, words[1].uppercased() == "PLAIN" {
                    let expected = Data("\u{0}\(self.options.user)\u{0}\(self.options.password)".utf8).base64EncodedString()
                    self.authenticated = words[2] == expected
                    self.send(context, self.authenticated ? "235 2.7.0 ok" : "535 5.7.8 bad credentials")
                } else if words.count == 2, words[1].uppercased() == "LOGIN" {
                    self.loginStep = 1
                    self.send(context, "334 VXNlcm5hbWU6")
                } else {
                    self.send(context, "504 5.5.4 unknown mechanism")
                }
            case "MAIL":
                if !self.options.auth.isEmpty && !self.authenticated { return self.send(context, "530 5.7.0 authentication required") }
                self.envelope = Received(from: Self.address(line), to: [], data: "")
                self.answer(context, verb, "250 2.1.0 ok")
            case "RCPT":
                self.envelope.to.append(Self.address(line))
                self.answer(context, verb, "250 2.1.5 ok")
            case "DATA":
                self.inData = !self.envelope.to.isEmpty
                self.answer(context, verb, self.inData ? "354 end with <CRLF>.<CRLF>" : "554 5.5.1 no valid recipients")
            case "QUIT":
                self.send(context, "221 2.0.0 bye")
                context.close(promise: nil)
            default:
                self.send(context, "500 5.5.2 unknown command")
            }
        }

        /// With pipelining, MAIL and RCPT answers wait for DATA.
        private func answer(_ context: ChannelHandlerContext, _ verb: String, _ reply: String) {
            guard self.options.pipelining, ["MAIL", "RCPT", "DATA"].contains(verb) else { return self.send(context, reply) }
            self.held.append(reply)
            if verb == "DATA" {
                self.send(context, self.held.joined(separator: "\r\n"))
                self.held = []
                if !reply.hasPrefix("354") { self.inData = false }
            }
        }

        private func login(_ context: ChannelHandlerContext, _ line: String) {
            if self.loginStep == 1 {
                self.loginStep = line == Data(self.options.user.utf8).base64EncodedString() ? 2 : 3
                self.send(context, "334 UGFzc3dvcmQ6")
            } else {
                self.authenticated = self.loginStep == 2 && line == Data(self.options.password.utf8).base64EncodedString()
                self.loginStep = 0
                self.send(context, self.authenticated ? "235 2.7.0 ok" : "535 5.7.8 bad credentials")
            }
        }

        private static func address(_ line: String) -> String {
            guard let open = line.firstIndex(of: "<"), let close = line.firstIndex(of: ">") else { return "" }
            return String(line[line.index(after: open)..<close])
        }

        private func send(_ context: ChannelHandlerContext, _ text: String) {
            context.writeAndFlush(Self.wrapOutboundOut(context.channel.allocator.buffer(string: text + "\r\n")), promise: nil)
        }
    }
}
