import Foundation
public import NIOCore
import NIOConcurrencyHelpers
public import NIOPosix
public import NIOSSL

/// Submits mail to an SMTP server (RFC 5321), one connection per call: greeting, `EHLO`, STARTTLS (RFC 3207) when
/// required, `AUTH PLAIN` or `AUTH LOGIN` (RFC 4954), the envelope pipelined when the server allows it (RFC 2920),
/// `DATA` with dot-stuffing, `QUIT`.
///
/// ```swift
/// let client = SMTPClient(server: try SMTPServer(url: "smtp://user:pass@mail.example.com:587"))
/// let data = message.rendered(date: .now, messageID: "\(UUID())@example.com", boundary: "=_b1")
/// try await client.send(from: "no-reply@example.com", to: ["someone@example.org"], data: data)
/// ```
public struct SMTPClient: Sendable {
    /// How long each step may take.
    public struct Timeouts: Sendable, Hashable {
        public var connect: TimeAmount = .seconds(10)
        /// The greeting and every reply to a command.
        public var reply: TimeAmount = .seconds(60)
        /// The reply after the message's final dot (the server may scan it first).
        public var dataAccepted: TimeAmount = .seconds(120)
        public init() {}
    }

    public var server: SMTPServer
    /// The name this client gives in `EHLO`: the host name of the sending service.
    public var heloName: String
    /// The TLS settings for STARTTLS and `smtps` (by default the system's trust roots, the certificate checked for
    /// the server's host name).
    public var tls: TLSConfiguration
    public var timeouts: Timeouts
    public var eventLoopGroup: any EventLoopGroup

    public init(
        server: SMTPServer,
        heloName: String = "localhost",
        tls: TLSConfiguration = .makeClientConfiguration(),
        timeouts: Timeouts = Timeouts(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.server = server
        self.heloName = heloName
        self.tls = tls
        self.timeouts = timeouts
        self.eventLoopGroup = eventLoopGroup
    }

    /// Hands one message to the server.
    ///
    /// - Parameters:
    ///   - from: The envelope sender (`MAIL FROM`).
    ///   - to: The envelope recipients (`RCPT TO`); every one must be accepted.
    ///   - data: The message (``MailMessage/rendered(date:messageID:boundary:)``), CRLF line ends.
    /// - Returns: The server's reply to the message (its queue id is usually in it).
    /// - Throws: ``SMTPError``; ``SMTPError/isPermanent`` says whether trying again later can help.
    @discardableResult
    public func send(from: String, to: [String], data: String) async throws -> SMTPReply {
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: self.tls)
        } catch {
            throw SMTPError(.tls, "the TLS settings are not usable (\(error))")
        }
        let connection = try await self.connect(context: context)
        do {
            let reply = try await self.converse(connection, context: context, from: from, to: to, data: data)
            await connection.quit(timeout: .seconds(5))
            return reply
        } catch {
            connection.close()
            throw SMTPClient.describe(error)
        }
    }

    // MARK: The dialogue

    private func converse(_ connection: SMTPConnection, context: NIOSSLContext, from: String, to: [String], data: String) async throws -> SMTPReply {
        let greeting = try await connection.reply(timeout: self.timeouts.reply)
        guard greeting.code == 220 else { throw SMTPError(.rejected, "the server refused the connection", reply: greeting) }
        var extensions = try await self.hello(connection)
        if self.server.security == .startTLS {
            guard extensions["STARTTLS"] != nil else {
                throw SMTPError(.startTLSUnavailable, "the server does not offer STARTTLS, which the SMTP URL requires (starttls=off turns it off)")
            }
            let reply = try await connection.command("STARTTLS", timeout: self.timeouts.reply)
            guard reply.code == 220 else { throw SMTPError(.tls, "the server refused STARTTLS", reply: reply) }
            try await connection.startTLS(context: context, serverHostname: self.serverHostname)
            // RFC 3207 §4.2: everything learnt before TLS is discarded; ask again.
            extensions = try await self.hello(connection)
        }
        if let username = self.server.username {
            try await self.authenticate(connection, extensions: extensions, username: username, password: self.server.password ?? "")
        }
        let needsUTF8 = !(from + to.joined()).utf8.allSatisfy { $0 < 0x80 }
        if needsUTF8 && extensions["SMTPUTF8"] == nil {
            throw SMTPError(.utf8Unsupported, "the address is internationalised and the server does not accept SMTPUTF8")
        }
        var body = Self.dotStuffed(data)
        if let size = extensions["SIZE"]?.first.flatMap({ Int($0) }), size > 0, body.count > size {
            throw SMTPError(.rejected, "the message (\(body.count) bytes) is larger than the server accepts (\(size))",
                reply: SMTPReply(code: 552, lines: ["message size exceeds fixed maximum message size"]))
        }
        let commands = ["MAIL FROM:<\(from)>" + (needsUTF8 ? " SMTPUTF8" : "")] + to.map { "RCPT TO:<\($0)>" } + ["DATA"]
        var replies: [SMTPReply] = []
        if extensions["PIPELINING"] != nil {
            try await connection.write(commands.map { $0 + "\r\n" }.joined())
            for _ in commands { replies.append(try await connection.reply(timeout: self.timeouts.reply)) }
        } else {
            for command in commands {
                let reply = try await connection.command(command, timeout: self.timeouts.reply)
                replies.append(reply)
                if !reply.isPositive && !reply.isIntermediate { break }
            }
        }
        let dataReply = replies.count == commands.count ? replies[replies.count - 1] : nil
        if let refused = replies.dropLast(dataReply == nil ? 0 : 1).first(where: { !$0.isPositive }) {
            if dataReply?.code == 354 {
                // RFC 2920 §3.1: the server is waiting for a message; end it empty, then give up on it.
                try await connection.write(".\r\n")
                _ = try? await connection.reply(timeout: self.timeouts.reply)
            }
            throw SMTPError(.rejected, refused == replies[0] ? "the server refused the sender" : "the server refused the recipient", reply: refused)
        }
        guard let dataReply, dataReply.code == 354 else {
            throw SMTPError(.rejected, "the server refused DATA", reply: dataReply ?? replies[replies.count - 1])
        }
        body.append(".\r\n")
        try await connection.write(body)
        let accepted = try await connection.reply(timeout: self.timeouts.dataAccepted)
        guard accepted.isPositive else { throw SMTPError(.rejected, "the server refused the message", reply: accepted) }
        return accepted
    }

    /// `EHLO`, falling back to `HELO` for a server that does not know it; the extensions by upper-cased keyword.
    private func hello(_ connection: SMTPConnection) async throws -> [String: [String]] {
        let reply = try await connection.command("EHLO \(self.heloName)", timeout: self.timeouts.reply)
        if reply.isPositive {
            var extensions: [String: [String]] = [:]
            for line in reply.lines.dropFirst() {
                let words = line.split(separator: " ").map(String.init)
                guard let keyword = words.first else { continue }
                extensions[keyword.uppercased()] = Array(words.dropFirst())
            }
            return extensions
        }
        let helo = try await connection.command("HELO \(self.heloName)", timeout: self.timeouts.reply)
        guard helo.isPositive else { throw SMTPError(.rejected, "the server refused EHLO and HELO", reply: helo) }
        return [:]
    }

    private func authenticate(_ connection: SMTPConnection, extensions: [String: [String]], username: String, password: String) async throws {
        let mechanisms = Set((extensions["AUTH"] ?? []).map { $0.uppercased() })
        let base64 = { (text: String) in Data(text.utf8).base64EncodedString() }
        let final: SMTPReply
        if mechanisms.contains("PLAIN") {
            // RFC 4616: authorisation identity (empty), NUL, user, NUL, password.
            final = try await connection.command("AUTH PLAIN " + base64("\u{0}\(username)\u{0}\(password)"), timeout: self.timeouts.reply)
        } else if mechanisms.contains("LOGIN") {
            var reply = try await connection.command("AUTH LOGIN", timeout: self.timeouts.reply)
            guard reply.code == 334 else { throw SMTPError(.authentication, "the server refused AUTH LOGIN", reply: reply) }
            reply = try await connection.command(base64(username), timeout: self.timeouts.reply)
            guard reply.code == 334 else { throw SMTPError(.authentication, "the server refused the user name", reply: reply) }
            final = try await connection.command(base64(password), timeout: self.timeouts.reply)
        } else {
            throw SMTPError(.authentication, "the server offers neither AUTH PLAIN nor AUTH LOGIN")
        }
        guard final.code == 235 else { throw SMTPError(.authentication, "the server refused the credentials", reply: final) }
    }

    /// RFC 5321 §4.5.2: a line that starts with a dot gets another; the text ends with CRLF.
    static func dotStuffed(_ data: String) -> String {
        var lines = data.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        var output = ""
        output.reserveCapacity(data.utf8.count + 64)
        for line in lines {
            if line.hasPrefix(".") { output.append(".") }
            output.append(contentsOf: line)
            output.append("\r\n")
        }
        return output
    }

    /// SNI and the name the certificate must carry; none for an address literal.
    private var serverHostname: String? {
        (try? SocketAddress(ipAddress: self.server.host, port: 0)) == nil ? self.server.host : nil
    }

    // MARK: The connection

    private func connect(context: NIOSSLContext) async throws -> SMTPConnection {
        let implicitTLS = self.server.security == .implicitTLS
        let hostname = self.serverHostname
        let bootstrap = ClientBootstrap(group: self.eventLoopGroup)
            .connectTimeout(self.timeouts.connect)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicitTLS {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: hostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    try channel.pipeline.syncOperations.addHandler(SMTPReplyHandler())
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: self.server.host, port: self.server.port).get()
        } catch {
            throw SMTPError(.connection, "could not connect to \(self.server.host):\(self.server.port) (\(error))")
        }
        let handler = try await channel.pipeline.handler(type: SMTPReplyHandler.self)
            .map { NIOLoopBound($0, eventLoop: channel.eventLoop) }
            .get()
        return SMTPConnection(channel: channel, handler: handler)
    }

    /// Failures below the dialogue (TLS, the decoder's protocol checks, closed channels) as ``SMTPError``s.
    static func describe(_ error: any Error) -> SMTPError {
        if let error = error as? SMTPError { return error }
        if error is NIOSSLError || error is BoringSSLError { return SMTPError(.tls, "TLS failed (\(error))") }
        if let error = error as? ChannelError, error == .ioOnClosedChannel || error == .alreadyClosed {
            return SMTPError(.connection, "the server closed the connection")
        }
        return SMTPError(.connection, "the connection failed (\(error))")
    }
}

/// One connection's channel and the handler that hands out its replies in order.
private struct SMTPConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<SMTPReplyHandler>

    /// The next reply, or a timeout (which closes the connection).
    func reply(timeout: TimeAmount) async throws -> SMTPReply {
        let loop = self.channel.eventLoop
        let promise = loop.makePromise(of: SMTPReply.self)
        let handler = self.handler
        let channel = self.channel
        loop.execute { handler.value.next(promise) }
        // Both run on the channel's loop: the deadline acts only if the reply has not come (a reply that arrives just
        // before the deadline must not see its connection closed under the next command).
        let answered = NIOLockedValueBox(false)
        promise.futureResult.whenComplete { _ in answered.withLockedValue { $0 = true } }
        let deadline = loop.scheduleTask(in: timeout) {
            guard !answered.withLockedValue({ $0 }) else { return }
            promise.fail(SMTPError(.timeout, "the server did not answer within \(timeout.nanoseconds / 1_000_000_000) s"))
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        do {
            return try await promise.futureResult.get()
        } catch {
            throw SMTPClient.describe(error)
        }
    }

    /// Sends one command line and waits for its reply. No error quotes the line (it may carry credentials).
    func command(_ line: String, timeout: TimeAmount) async throws -> SMTPReply {
        try await self.write(line + "\r\n")
        return try await self.reply(timeout: timeout)
    }

    func write(_ text: String) async throws {
        do {
            try await self.channel.writeAndFlush(self.channel.allocator.buffer(string: text))
        } catch {
            // A write fails because the channel closed; why it closed (a TLS failure, say) is what the handler saw.
            let handler = self.handler
            let cause = try? await self.channel.eventLoop.submit { handler.value.failure.map { SMTPClient.describe($0) } }.get()
            throw cause ?? SMTPClient.describe(error)
        }
    }

    /// Puts TLS in front of the reply decoder, after the server's `220` to `STARTTLS`.
    func startTLS(context: NIOSSLContext, serverHostname: String?) async throws {
        let channel = self.channel
        try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverHostname), position: .first)
        }.get()
    }

    /// `QUIT`, politely and briefly; the connection is closed either way.
    func quit(timeout: TimeAmount) async {
        _ = try? await self.command("QUIT", timeout: timeout)
        self.close()
    }

    func close() {
        self.channel.close(promise: nil)
    }
}

/// Hands the decoded replies to whoever asks, in order; a failure (an error, the connection closing) fails every
/// waiting and later request.
private final class SMTPReplyHandler: ChannelInboundHandler {
    typealias InboundIn = SMTPReply

    private var waiting = CircularBuffer<EventLoopPromise<SMTPReply>>()
    private var received = CircularBuffer<SMTPReply>()
    private(set) var failure: (any Error)?

    func next(_ promise: EventLoopPromise<SMTPReply>) {
        if let reply = self.received.popFirst() {
            promise.succeed(reply)
        } else if let failure = self.failure {
            promise.fail(failure)
        } else {
            self.waiting.append(promise)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let reply = Self.unwrapInboundIn(data)
        if let waiter = self.waiting.popFirst() {
            waiter.succeed(reply)
        } else {
            self.received.append(reply)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.fail(SMTPError(.connection, "the server closed the connection"))
        context.fireChannelInactive()
    }

    private func fail(_ error: any Error) {
        if self.failure == nil { self.failure = error }
        while let waiter = self.waiting.popFirst() { waiter.fail(self.failure!) }
    }
}
