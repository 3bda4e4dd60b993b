import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import TouchstoneCrypto
import TouchstoneStore

extension HTTPField.Name {
    static let requestId = HTTPField.Name("X-Request-Id")!
}

/// The first middleware of every request: gives it a request id (the one a trusted proxy sent in `X-Request-Id`, else
/// a new one), returns it in `X-Request-Id`, puts it in the request's log metadata, and, when the response is known,
/// counts the request in the metrics (by route template, method and status) and writes one access-log line (at
/// `info`: method, route, status, duration; never the path's values, the query or a header).
struct RequestObservationMiddleware: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let metrics: ServerMetrics
    let trustedProxies: Set<String>
    let randomBytes: @Sendable (Int) -> [UInt8]

    /// A request id sent by a trusted proxy is kept when it is short and printable.
    static func acceptable(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        var context = context
        let peer = context.peerAddress
        let id: String
        if let peer, self.trustedProxies.contains(peer), let sent = request.headers[.requestId], Self.acceptable(sent) {
            id = sent
        } else {
            id = Hex.encode(self.randomBytes(12))
        }
        context.logger[metadataKey: "request_id"] = .string(id)
        let route = context.endpointPath ?? "unmatched"
        let method = request.method.rawValue
        func finish(_ status: Int) {
            let elapsed = DispatchTime.now().uptimeNanoseconds - start
            self.metrics.request(method: method, route: route, status: status, nanoseconds: elapsed)
            context.logger.info(
                "request",
                metadata: [
                    "method": .string(method), "route": .string(route), "status": .stringConvertible(status),
                    "duration_ms": .string(String(format: "%.3f", Double(elapsed) / 1e6)),
                ]
            )
        }
        do {
            var response = try await next(request, context)
            response.headers[.requestId] = id
            finish(response.status.code)
            return response
        } catch {
            // Errors become responses in ErrorMiddleware, inside this one; whatever escapes is answered by the server.
            finish((error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
    }
}

/// `GET /metrics`: the Prometheus text exposition format (version 0.0.4).
struct MetricsController {
    let metrics: ServerMetrics
    let store: any TouchstoneStore
    let now: @Sendable () -> Date

    func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("/metrics") { _, _ -> Response in
            let body = await self.metrics.scrape(store: self.store, now: self.now())
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}
