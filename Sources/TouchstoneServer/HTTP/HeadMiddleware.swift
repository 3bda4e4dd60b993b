import Hummingbird

/// HEAD for every GET route (RFC 9110 §9.3.2, issue #44 item 5): the router answers HEAD with the GET route's handler
/// (`autoGenerateHeadEndpoints`), and this middleware, outside the error middleware, drops the body of every answer to
/// a HEAD request — an error's too — keeping its status and headers, `Content-Length` included.
struct HeadMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        return request.method == .head ? response.createHeadResponse() : response
    }
}
