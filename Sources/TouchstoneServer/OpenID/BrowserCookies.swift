import Foundation
import Hummingbird
import TouchstoneCrypto

/// The OpenID provider's cookies: the browser session (an ordinary Touchstone session's token) and the CSRF token its
/// forms repeat.
///
/// Both are `HttpOnly; SameSite=Lax; Path=/` and, with the `__Host-` prefix, `Secure`: the browser then never sends
/// them over plain HTTP nor lets a sibling domain set them. Only an issuer on plain-HTTP loopback (development) gets
/// unprefixed cookies without `Secure`, which a browser would otherwise drop.
struct BrowserCookies: Sendable {
    /// Whether the cookies are `Secure` with the `__Host-` prefix.
    let secure: Bool

    init(issuer: String) {
        let url = URL(string: issuer)
        let host = url?.host?.lowercased() ?? ""
        let loopback = host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]" || host.hasSuffix(".localhost")
        self.secure = !(url?.scheme == "http" && loopback)
    }

    var sessionName: String { self.secure ? "__Host-touchstone_session" : "touchstone_session" }
    var csrfName: String { self.secure ? "__Host-touchstone_csrf" : "touchstone_csrf" }

    /// The value of cookie `name` in the request (the first, if a browser sent several).
    func value(_ name: String, in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for part in header.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingASCIISpaces == name else { continue }
                let value = String(pair[1].trimmingASCIISpaces)
                // Our values are base64url; anything else is not ours.
                guard !value.isEmpty, value.utf8.count <= 128,
                    value.utf8.allSatisfy({ Self.isBase64URL($0) })
                else {
                    return nil
                }
                return value
            }
        }
        return nil
    }

    /// `Set-Cookie` for the session: a session cookie for the browser (it ends when the browser closes unless the
    /// Touchstone session ends first; the server checks the session on every use).
    func setSession(_ token: String, maxAge: Int) -> String {
        self.cookie(self.sessionName, token, maxAge: maxAge)
    }

    func clearSession() -> String {
        self.cookie(self.sessionName, "", maxAge: 0)
    }

    func setCSRF(_ token: String) -> String {
        self.cookie(self.csrfName, token, maxAge: nil)
    }

    private func cookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        var text = "\(name)=\(value); Path=/; HttpOnly; SameSite=Lax"
        if let maxAge { text += "; Max-Age=\(max(0, maxAge))" }
        if self.secure { text += "; Secure" }
        return text
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }
}
