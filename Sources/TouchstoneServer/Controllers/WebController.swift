import Foundation
import Hummingbird

/// The demo page: `GET /`, `/app.js`, `/style.css`, shipped as package resources (no build step, no CDN).
struct WebController {
    typealias Context = TouchstoneRequestContext

    /// The files, read once at start.
    private let files: [String: (contentType: String, body: ByteBuffer)]

    init() {
        var files: [String: (String, ByteBuffer)] = [:]
        for (name, type) in [("index.html", "text/html; charset=utf-8"), ("app.js", "text/javascript; charset=utf-8"), ("style.css", "text/css; charset=utf-8")] {
            let parts = name.split(separator: ".")
            if let url = Bundle.module.url(forResource: String(parts[0]), withExtension: String(parts[1]), subdirectory: "web"),
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
    }

    private func serve(_ name: String) throws -> Response {
        guard let file = self.files[name] else { throw APIError.notFound }
        return Response(
            status: .ok,
            headers: [
                .contentType: file.contentType,
                // Only this origin's scripts and styles; no framing (clickjacking), no referrer leaks.
                .contentSecurityPolicy: "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'",
                .init("X-Content-Type-Options")!: "nosniff",
                .init("Referrer-Policy")!: "no-referrer",
                .cacheControl: "no-cache",
            ],
            body: .init(byteBuffer: file.body)
        )
    }
}
