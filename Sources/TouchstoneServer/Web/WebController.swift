import Foundation
import Hummingbird

/// The demo page (`GET /`, `/app.js` with `/recovery.js`, `/approvals.js` and `/account.js`, `/style.css`) and the admin console (`GET /admin/`, `/admin/admin.js` with `/admin/admin-dom.js`,
/// `/admin/admin.css`), shipped as package resources (no build step, no CDN).
struct WebController {
    typealias Context = TouchstoneRequestContext

    /// The files, read once at start.
    private let files: [String: (contentType: String, body: ByteBuffer)]
    /// The first configured web origin (`--origin`), where a browser that arrives on an IP address is sent; nil: the
    /// development default, `http://localhost:<port>`.
    private let origin: String?

    /// - Parameter signUp: false (`TOUCHSTONE_SIGN_UP=off`) serves the page with its sign-up card hidden.
    init(origin: String? = nil, signUp: Bool = true) {
        self.origin = origin
        var files: [String: (String, ByteBuffer)] = [:]
        let html = "text/html; charset=utf-8", script = "text/javascript; charset=utf-8", css = "text/css; charset=utf-8"
        let list = [
            ("index.html", "web", html), ("app.js", "web", script), ("recovery.js", "web", script), ("approvals.js", "web", script),
            ("account.js", "web", script), ("webauthn-json.js", "web", script), ("style.css", "web", css),
            ("admin/index.html", "web/admin", html), ("admin/admin.js", "web/admin", script), ("admin/admin-dom.js", "web/admin", script),
            ("admin/admin.css", "web/admin", css),
        ]
        for (name, directory, type) in list {
            let file = name.split(separator: "/").last!
            let parts = file.split(separator: ".")
            if let url = Bundle.module.url(forResource: String(parts[0]), withExtension: String(parts[1]), subdirectory: directory),
                let data = try? Data(contentsOf: url)
            {
                files[name] = (type, ByteBuffer(bytes: data))
            }
        }
        if !signUp, let page = files["index.html"] {
            let html = String(buffer: page.1).replacingOccurrences(of: #"id="sign-up-card""#, with: #"id="sign-up-card" hidden"#)
            files["index.html"] = (page.0, ByteBuffer(string: html))
        }
        self.files = files
    }

    func addRoutes(to router: Router<Context>) {
        router.get("/") { request, _ in
            if let target = self.canonicalLocation(for: request) {
                return Response(status: .found, headers: [.location: target, .cacheControl: "no-store"])
            }
            return try self.serve("index.html")
        }
        router.get("/app.js") { _, _ in try self.serve("app.js") }
        router.get("/recovery.js") { _, _ in try self.serve("recovery.js") }
        router.get("/approvals.js") { _, _ in try self.serve("approvals.js") }
        router.get("/account.js") { _, _ in try self.serve("account.js") }
        router.get("/webauthn-json.js") { _, _ in try self.serve("webauthn-json.js") }
        router.get("/style.css") { _, _ in try self.serve("style.css") }
        // "/admin" and "/admin/" are one route (the router ignores a trailing slash).
        router.get("/admin/") { _, _ in try self.serve("admin/index.html") }
        router.get("/admin/admin.js") { _, _ in try self.serve("admin/admin.js") }
        router.get("/admin/admin-dom.js") { _, _ in try self.serve("admin/admin-dom.js") }
        router.get("/admin/admin.css") { _, _ in try self.serve("admin/admin.css") }
    }

    /// Where to send a browser that opened the page on an IP address (`http://127.0.0.1:8080/`, the address `serve`
    /// listens on): passkeys cannot work there, since an IP address cannot be a relying party ID (browsers answer
    /// "This is an invalid domain."). It goes to the configured origin, or by default to `localhost` on the same port.
    /// nil: the page was opened on a name, and is served.
    func canonicalLocation(for request: Request) -> String? {
        guard let authority = request.head.authority, let (host, port) = Self.split(authority),
            Self.isIPAddress(host)
        else {
            return nil
        }
        if let origin = self.origin { return origin + "/" }
        return "http://localhost" + (port.map { ":\($0)" } ?? "") + "/"
    }

    /// `host[:port]` or `[v6]:port`; nil when the text is neither.
    static func split(_ authority: String) -> (host: Substring, port: Int?)? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return (parts[0], nil)
        case 2:
            guard let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
            return (parts[0], port)
        default: return nil
        }
    }

    /// An IPv4 dotted quad, or an IPv6 literal (written without its brackets here).
    static func isIPAddress(_ host: Substring) -> Bool {
        if host.contains(":") { return host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    private func serve(_ name: String) throws -> Response {
        guard let file = self.files[name] else { throw APIError.notFound }
        return Response(
            status: .ok,
            headers: [
                .contentType: file.contentType,
                // Only this origin's scripts and styles; images also as data: URLs (authenticator icons from metadata);
                // no framing (clickjacking), no referrer leaks.
                .contentSecurityPolicy:
                    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
                .init("X-Content-Type-Options")!: "nosniff",
                .init("Referrer-Policy")!: "no-referrer",
                .cacheControl: "no-cache",
            ],
            body: .init(byteBuffer: file.body)
        )
    }
}
