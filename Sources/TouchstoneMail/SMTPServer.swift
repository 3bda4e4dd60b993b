import Foundation

/// Where and how mail is submitted: an SMTP server named by a URL (`TOUCHSTONE_SMTP_URL`).
///
/// - `smtp://user:password@host:587`: a plain connection upgraded with STARTTLS (RFC 3207) before anything else is
///   sent; a server that does not offer it is refused. Port 587 by default.
/// - `smtp://host:25?starttls=off`: no TLS at all (a relay on the same host or network); credentials are refused with
///   it, since they would cross the network in clear.
/// - `smtps://user:password@host:465`: TLS from the first byte (RFC 8314). Port 465 by default.
///
/// The user and password are percent-decoded (`%40` for an `@` in a user name).
public struct SMTPServer: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is protected.
    public enum Security: String, Sendable, Hashable {
        /// STARTTLS after the greeting, required.
        case startTLS
        /// TLS from the first byte.
        case implicitTLS
        /// None (only with `?starttls=off`).
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?

    public init(host: String, port: Int, security: Security, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
    }

    /// Parses an `smtp:` or `smtps:` URL.
    ///
    /// - Throws: ``SMTPServerURLError`` with a reason: another scheme, no host, a bad port, an unknown query
    ///   parameter, `starttls=off` with `smtps`, or credentials without TLS.
    public init(url text: String) throws(SMTPServerURLError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw SMTPServerURLError("is not a URL")
        }
        let implicit: Bool
        switch scheme {
        case "smtp": implicit = false
        case "smtps": implicit = true
        default: throw SMTPServerURLError("must start with smtp:// or smtps://")
        }
        guard let host = components.host, !host.isEmpty else { throw SMTPServerURLError("names no host") }
        guard components.path.isEmpty || components.path == "/" else { throw SMTPServerURLError("must not have a path") }
        let port = components.port ?? (implicit ? 465 : 587)
        guard (1...65535).contains(port) else { throw SMTPServerURLError("has a port outside 1-65535") }
        var security: Security = implicit ? .implicitTLS : .startTLS
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("starttls", "off"?) where !implicit: security = .none
            case ("starttls", "on"?) where !implicit: security = .startTLS
            case ("starttls", _): throw SMTPServerURLError("takes starttls=on or starttls=off, with smtp:// only")
            default: throw SMTPServerURLError("has an unknown parameter '\(item.name)' (only starttls=off is known)")
            }
        }
        let username = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        if (username != nil || password != nil) && (username?.isEmpty ?? true) {
            throw SMTPServerURLError("has a password without a user name")
        }
        if username != nil && security == .none {
            throw SMTPServerURLError("has credentials with starttls=off: they would cross the network in clear")
        }
        self.init(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port, security: security, username: username, password: password)
    }

    /// The server without its credentials, for logs: `smtp://host:587 (STARTTLS, as user)`.
    public var description: String {
        let scheme = self.security == .implicitTLS ? "smtps" : "smtp"
        let mode = switch self.security {
        case .startTLS: "STARTTLS"
        case .implicitTLS: "TLS"
        case .none: "no TLS"
        }
        let user = self.username.map { ", as \($0)" } ?? ""
        return "\(scheme)://\(self.host):\(self.port) (\(mode)\(user))"
    }
}

/// Why an SMTP URL was refused; the message never repeats the URL (it may hold a password).
public struct SMTPServerURLError: Error, Hashable, CustomStringConvertible {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { "the SMTP URL \(self.reason)" }
}
