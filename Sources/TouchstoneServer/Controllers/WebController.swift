import Foundation
import Hummingbird

/// The demo page (`GET /`, `/app.js`, `/style.css`) and the admin console (`GET /admin/`, `/admin/admin.js`,
/// `/admin/admin.css`), shipped as package resources (no build step, no CDN).
struct WebController {
    typealias Context = TouchstoneRequestContext

    /// The files, read once at start.
    private let files: [String: (contentType: String, body: ByteBuffer)]

    init() {
        var files: [String: (String, ByteBuffer)] = [:]
        let html = "text/html; charset=utf-8", script = "text/javascript; charset=utf-8", css = "text/css; charset=utf-8"
        let list = [
            ("index.html", "web", html), ("app.js", "web", script), ("style.css", "web", css),
            ("admin/index.html", "web/admin", html), ("admin/admin.js", "web/admin", script), ("admin/admin.css", "web/admin", css),
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
        self.files = files
    }

    func addRoutes(to router: Router<Context>) {
        router.get("/") { _, _ in try self.serve("index.html") }
        router.get("/app.js") { _, _ in try self.serve("app.js") }
        router.get("/style.css") { _, _ in try self.serve("style.css") }
        // "/admin" and "/admin/" are one route (the router ignores a trailing slash).
        router.get("/admin/") { _, _ in try self.serve("admin/index.html") }
        router.get("/admin/admin.js") { _, _ in try self.serve("admin/admin.js") }
        router.get("/admin/admin.css") { _, _ in try self.serve("admin/admin.css") }
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
