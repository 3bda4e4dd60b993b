/// Why a message was not handed over. ``isPermanent`` tells a queue whether trying again later can help.
///
/// The text never holds a credential or the message: a reply is quoted by its code and first line.
public struct SMTPError: Error, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The connection could not be made, broke, or was closed.
        case connection
        /// The server did not answer in time.
        case timeout
        /// TLS failed (the handshake, or the certificate).
        case tls
        /// `starttls` is required and the server does not offer STARTTLS.
        case startTLSUnavailable
        /// The server refused the credentials, or offers no mechanism this client speaks.
        case authentication
        /// The server answered a command with a failure reply.
        case rejected
        /// The server broke the protocol (a malformed, oversized or unexpected reply).
        case protocolViolation
        /// An internationalised address and a server without SMTPUTF8.
        case utf8Unsupported
    }

    public var kind: Kind
    public var message: String
    /// The server's reply, when the failure is one.
    public var reply: SMTPReply?

    public init(_ kind: Kind, _ message: String, reply: SMTPReply? = nil) {
        self.kind = kind
        self.message = message
        self.reply = reply
    }

    static func protocolViolation(_ message: String) -> SMTPError { SMTPError(.protocolViolation, message) }

    /// Whether sending the same message again cannot succeed without a change on the server's side: a 5xx reply to
    /// the envelope or the data (the recipient does not exist, the message is refused), or an address the server
    /// cannot take. Connection, TLS, authentication and 4xx failures are worth trying again later.
    public var isPermanent: Bool {
        switch self.kind {
        case .rejected: self.reply?.isPermanentFailure ?? false
        case .utf8Unsupported: true
        default: false
        }
    }

    public var description: String {
        if let reply { return "\(self.message): \(reply)" }
        return self.message
    }
}
