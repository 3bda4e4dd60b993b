import NIOCore

/// One SMTP reply (RFC 5321 §4.2): a three-digit code and one or more lines of text.
public struct SMTPReply: Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    /// The text of each line, without the code and separator.
    public var lines: [String]

    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// 2xx: done.
    public var isPositive: Bool { (200..<300).contains(self.code) }
    /// 3xx: go on (`354` after `DATA`, `334` during `AUTH`).
    public var isIntermediate: Bool { (300..<400).contains(self.code) }
    /// 5xx: do not try again as is.
    public var isPermanentFailure: Bool { (500..<600).contains(self.code) }

    /// The code and the first line, cut to 200 characters (for logs and errors).
    public var description: String {
        let text = self.lines.first ?? ""
        return "\(self.code) \(text.count > 200 ? String(text.prefix(200)) + "…" : text)"
    }
}

/// Splits the server's bytes into replies: lines end with CRLF (a bare LF is accepted), a line `250-...` continues
/// the reply and `250 ...` (or `250`) ends it. A line over 2,048 bytes, more than 100 lines in one reply, a line that
/// does not start with a code, or a code that changes within a reply closes the connection: a server that sends
/// those is not one to talk to.
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply

    static let maximumLineLength = 2048
    static let maximumLines = 100

    private var pending: [String] = []
    private var pendingCode: Int?

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maximumLineLength { throw SMTPError.protocolViolation("a reply line is too long") }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        guard length <= Self.maximumLineLength else { throw SMTPError.protocolViolation("a reply line is too long") }
        var line = buffer.readBytes(length: length + 1)!
        line.removeLast()
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard line.count >= 3, line[0...2].allSatisfy({ (0x30...0x39).contains($0) }), (0x32...0x35).contains(line[0]) else {
            throw SMTPError.protocolViolation("a reply line does not start with a code")
        }
        let code = Int(line[0] - 0x30) * 100 + Int(line[1] - 0x30) * 10 + Int(line[2] - 0x30)
        if let pendingCode, pendingCode != code { throw SMTPError.protocolViolation("a reply changes its code") }
        let separator = line.count > 3 ? line[3] : UInt8(ascii: " ")
        guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
            throw SMTPError.protocolViolation("a reply line has no separator after its code")
        }
        self.pending.append(String(decoding: line.dropFirst(4), as: UTF8.self))
        guard self.pending.count <= Self.maximumLines else { throw SMTPError.protocolViolation("a reply has too many lines") }
        if separator == UInt8(ascii: "-") {
            self.pendingCode = code
            return .continue
        }
        let reply = SMTPReply(code: code, lines: self.pending)
        self.pending = []
        self.pendingCode = nil
        context.fireChannelRead(Self.wrapInboundOut(reply))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // Bytes after the last complete reply when the server closes are nothing to act on.
        while try self.decode(context: context, buffer: &buffer) == .continue, buffer.readableBytes > 0 {}
        return .needMoreData
    }
}
