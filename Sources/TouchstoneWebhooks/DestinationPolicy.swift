/// Which webhook URLs and destination addresses the server accepts (issue #32: SSRF).
///
/// A URL is `https`, or `http` only to a loopback destination unless ``allowHTTP``. A destination in the loopback,
/// private, link-local or unique-local ranges (also inside an IPv4-mapped IPv6 address) is refused unless
/// ``allowPrivate`` lets it through: checked when the URL names an address or `localhost`, and again at delivery
/// for every address its name resolves to.
public struct DestinationPolicy: Sendable, Hashable {
    /// `TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE`.
    public enum PrivateDestinations: String, Sendable, CaseIterable {
        /// Only public addresses (the default).
        case off
        /// Public addresses and loopback (development, a receiver beside the server).
        case loopback
        /// Every address (a receiver on the private network).
        case all
    }

    public var allowHTTP: Bool
    public var allowPrivate: PrivateDestinations

    public init(allowHTTP: Bool = false, allowPrivate: PrivateDestinations = .off) {
        self.allowHTTP = allowHTTP
        self.allowPrivate = allowPrivate
    }

    public static let maximumURLLength = 2000

    /// Checks a URL an endpoint is created or changed with.
    ///
    /// - Throws: ``WebhookError`` with a message that says what is wrong.
    public func validate(_ text: String) throws(WebhookError) -> WebhookURL {
        let url = try WebhookURL(parsing: text)
        let literal = url.hostAddress
        let loopbackName = url.host == "localhost" || url.host.hasSuffix(".localhost")
        let isLoopback = loopbackName || literal?.range == .loopback
        if url.scheme == "http" && !self.allowHTTP && !isLoopback {
            throw .invalidURL("'\(text)' uses http: use https (http only to a loopback address, unless TOUCHSTONE_WEBHOOKS_ALLOW_HTTP=on)")
        }
        if loopbackName {
            if let refusal = self.refusal(for: .loopback) { throw .invalidURL("'\(text)' names localhost: \(refusal)") }
        } else if let literal, let refusal = self.refusal(for: literal.range) {
            throw .invalidURL("'\(text)' names \(literal), a \(literal.range.rawValue) address: \(refusal)")
        }
        return url
    }

    /// Whether a delivery may connect to `address`; nil when it may, otherwise why not.
    public func refusal(for address: IPAddress) -> String? {
        self.refusal(for: address.range).map { "\(address) is a \(address.range.rawValue) address: \($0)" }
    }

    func refusal(for range: IPAddress.Range) -> String? {
        switch (range, self.allowPrivate) {
        case (.public, _), (_, .all), (.loopback, .loopback): return nil
        case (.loopback, .off):
            return "loopback destinations need TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE=loopback (or all)"
        default:
            return "private destinations need TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE=all"
        }
    }
}

/// A webhook endpoint's URL, parsed: `http` or `https`, a host, an optional port, a path and query; never user
/// information or a fragment, never white space or control characters.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as given.
    public let value: String
    public let scheme: String
    /// The host, lowercased, without the brackets of an IPv6 literal.
    public let host: String
    public let port: Int

    /// The host's address when the URL names one instead of a name.
    public var hostAddress: IPAddress? { IPAddress(self.host) }

    public var description: String { self.value }

    public init(parsing text: String) throws(WebhookError) {
        guard !text.isEmpty, text.utf8.count <= DestinationPolicy.maximumURLLength else {
            throw .invalidURL("a URL must be 1 to \(DestinationPolicy.maximumURLLength) characters")
        }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f || !$0.isASCII }) else {
            throw .invalidURL("the URL contains white space, a control character or a non-ASCII character (percent-encode it)")
        }
        guard let colon = text.firstIndex(of: ":") else { throw .invalidURL("'\(text)' is not an absolute URL") }
        let scheme = text[..<colon].lowercased()
        guard scheme == "https" || scheme == "http" else {
            throw .invalidURL("'\(text)' uses the scheme '\(scheme)': use https")
        }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { throw .invalidURL("'\(text)' has no host") }
        guard !text.contains("#") else { throw .invalidURL("'\(text)' has a fragment (#...)") }
        let afterSlashes = rest.dropFirst(2)
        let authority = afterSlashes.prefix(while: { $0 != "/" && $0 != "?" })
        guard !authority.contains("@") else { throw .invalidURL("'\(text)' has user information (user@host)") }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL("'\(text)' has an unclosed IPv6 literal") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidURL("'\(text)' has text after its IPv6 literal") }
                portText = after.dropFirst()
            }
            guard let address = IPAddress(host), !address.isIPv4 else { throw .invalidURL("'\(text)' has an invalid IPv6 literal") }
        } else {
            if let index = authority.firstIndex(of: ":") {
                host = authority[..<index]
                portText = authority[authority.index(after: index)...]
            } else {
                host = authority
            }
            guard !host.isEmpty, host.utf8.count <= 253,
                host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }),
                !host.hasPrefix("."), !host.contains("..")
            else {
                throw .invalidURL("'\(text)' has no valid host")
            }
            // A host of digits and dots must be a dotted quad: `0x7f.1`, `2130706433` and `127.1` are other ways of
            // writing a loopback address, which a resolver would accept.
            if host.allSatisfy({ $0.isNumber || $0 == "." }) || host.lowercased().hasPrefix("0x") || host.split(separator: ".").last.map({ $0.allSatisfy(\.isNumber) }) == true {
                guard IPAddress.parseIPv4(host) != nil else {
                    throw .invalidURL("'\(text)' names a host that looks like an address but is not a dotted quad")
                }
            }
        }
        var port = scheme == "https" ? 443 : 80
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isNumber), let value = Int(portText), (1...65535).contains(value) else {
                throw .invalidURL("'\(text)' has an invalid port")
            }
            port = value
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        self.value = text
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }
}

/// Why a webhook setting or URL is refused; the message is shown to the operator (CLI, admin API's 400).
public struct WebhookError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidURL = "invalid_url"
        case invalidEventType = "invalid_event_type"
        case invalidDescription = "invalid_description"
        case invalidSecret = "invalid_secret"
    }

    public let code: Code
    public let message: String

    public var description: String { self.message }

    public static func invalidURL(_ message: String) -> WebhookError { WebhookError(code: .invalidURL, message: message) }
    public static func invalidEventType(_ message: String) -> WebhookError { WebhookError(code: .invalidEventType, message: message) }
    public static func invalidDescription(_ message: String) -> WebhookError { WebhookError(code: .invalidDescription, message: message) }
    public static func invalidSecret(_ message: String) -> WebhookError { WebhookError(code: .invalidSecret, message: message) }
}
