public import Foundation

/// A redirect URI a client registers, and the comparison an authorization request's `redirect_uri` must pass.
///
/// Accepted at registration (OAuth 2.1 and RFC 8252, "OAuth 2.0 for Native Apps"):
/// - `https` with a host;
/// - `http` only on a loopback host: `127.0.0.1`, `[::1]` or `localhost` (RFC 8252 §7.3, for apps and development);
/// - a private-use scheme of a native app, a reverse domain name such as `com.example.app:/callback` (RFC 8252 §7.1).
///
/// Always absolute, without a fragment (RFC 6749 §3.1.2), without user information, without white space or control
/// characters, and at most 2,000 characters. Anything else (`javascript:`, `data:`, a custom scheme without a dot,
/// `http://example.com`) is refused with `invalid_redirect_uri` and a message that says why.
public struct RedirectURI: Hashable, Sendable, CustomStringConvertible {
    /// The URI exactly as registered: compared as a string (no normalisation).
    public let value: String

    public static let maximumLength = 2000

    /// Checks a redirect URI a client registers.
    public init(validating text: String) throws(OpenIDError) {
        guard !text.isEmpty else { throw .invalidRedirectURI("a redirect URI must not be empty") }
        guard text.utf8.count <= Self.maximumLength else {
            throw .invalidRedirectURI("a redirect URI must be at most \(Self.maximumLength) characters")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            throw .invalidRedirectURI("'\(Self.shown(text))' contains white space or a control character")
        }
        guard !text.contains("#") else { throw .invalidRedirectURI("'\(Self.shown(text))' has a fragment (#...), which a redirect URI must not have") }
        guard let colon = text.firstIndex(of: ":"), let scheme = Self.scheme(text[..<colon]) else {
            throw .invalidRedirectURI("'\(Self.shown(text))' is not an absolute URI (it has no scheme)")
        }
        let rest = text[text.index(after: colon)...]
        switch scheme {
        case "https", "http":
            guard rest.hasPrefix("//"), let authority = Self.authority(rest.dropFirst(2)) else {
                throw .invalidRedirectURI("'\(Self.shown(text))' has no host")
            }
            guard !authority.contains("@") else {
                throw .invalidRedirectURI("'\(Self.shown(text))' has user information (user@host), which a redirect URI must not have")
            }
            guard let host = Self.host(of: authority), !host.isEmpty else {
                throw .invalidRedirectURI("'\(Self.shown(text))' has no host")
            }
            if scheme == "http" && !Self.loopbackHosts.contains(host.lowercased()) {
                throw .invalidRedirectURI(
                    "'\(Self.shown(text))' uses http on a host that is not loopback; use https (http only for 127.0.0.1, [::1] or localhost)"
                )
            }
        default:
            // A native app's private-use scheme: a reverse domain name (RFC 8252 §7.1), never a bare word.
            guard scheme.contains("."), !scheme.hasPrefix("."), !scheme.hasSuffix("."), !scheme.contains("..") else {
                throw .invalidRedirectURI(
                    "'\(Self.shown(text))' uses the scheme '\(scheme)': use https, http on a loopback host, or an app's reverse-domain scheme (com.example.app:/callback)"
                )
            }
            guard !rest.isEmpty else { throw .invalidRedirectURI("'\(Self.shown(text))' has nothing after its scheme") }
        }
        self.value = text
    }

    public var description: String { self.value }

    /// Whether an authorization request's `redirect_uri` is this registered one: the same string, except that the port
    /// of a loopback IP-literal redirect URI (`http://127.0.0.1:PORT/...`, `http://[::1]:PORT/...`) may differ, since a
    /// native app listens on whatever port it gets (RFC 8252 §7.3). `localhost` gets no such leeway (RFC 8252 §8.3).
    public func matches(_ requested: String) -> Bool {
        if requested == self.value { return true }
        guard let registered = Self.withoutLoopbackPort(self.value), let asked = Self.withoutLoopbackPort(requested) else {
            return false
        }
        return registered == asked
    }

    // MARK: Parsing

    static let loopbackHosts: Set<String> = ["127.0.0.1", "[::1]", "localhost"]

    /// A URI scheme (RFC 3986 §3.1: a letter, then letters, digits, `+`, `-`, `.`), lowercased; nil when it is none.
    private static func scheme(_ text: Substring) -> String? {
        guard let first = text.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            text.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) })
        else {
            return nil
        }
        return text.lowercased()
    }

    /// The authority after `//`: up to the first `/`, `?` or the end.
    private static func authority(_ text: Substring) -> Substring? {
        let end = text.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? text.endIndex
        let authority = text[..<end]
        return authority.isEmpty ? nil : authority
    }

    /// The host of an authority (`host`, `host:port`, `[v6]:port`), its brackets kept; nil when the port is not a number.
    private static func host(of authority: Substring) -> Substring? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || Self.isPort(after) else { return nil }
            return authority[...close]
        }
        guard let colon = authority.firstIndex(of: ":") else { return authority }
        guard Self.isPort(authority[colon...]) else { return nil }
        return authority[..<colon]
    }

    /// `:` and 1 to 5 digits.
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.dropFirst()
        return text.first == ":" && (1...5).contains(digits.count) && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber)
    }

    /// The URI with the port of its loopback IP-literal host taken out; nil when it is not an `http` URI on
    /// `127.0.0.1` or `[::1]`.
    static func withoutLoopbackPort(_ uri: String) -> String? {
        for prefix in ["http://127.0.0.1", "http://[::1]"] where uri.hasPrefix(prefix) {
            var rest = uri.dropFirst(prefix.count)
            if rest.first == ":" {
                let digits = rest.dropFirst().prefix(while: { $0.isASCII && $0.isNumber })
                guard (1...5).contains(digits.count) else { return nil }
                rest = rest.dropFirst(1 + digits.count)
            }
            guard rest.isEmpty || rest.first == "/" || rest.first == "?" else { return nil }
            return prefix + rest
        }
        return nil
    }

    /// The URI as a message may show it: at most 100 characters.
    private static func shown(_ text: String) -> String {
        text.count <= 100 ? text : String(text.prefix(100)) + "…"
    }
}
