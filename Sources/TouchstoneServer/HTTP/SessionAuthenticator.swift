import Hummingbird

/// Requires `Authorization: Bearer <token>` naming a live session and puts it in the context.
struct SessionAuthenticator: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let sessions: SessionManager

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        context.identity = try await self.sessions.authenticate(token: try request.bearerToken())
        return try await next(request, context)
    }
}

extension Request {
    /// The token of `Authorization: Bearer <token>`; 401 `unauthenticated` when the header is missing or malformed.
    func bearerToken() throws -> String {
        guard let header = self.headers[.authorization] else {
            throw APIError.unauthenticated("missing Authorization: Bearer header")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty, parts[1].utf8.count <= 256 else {
            throw APIError.unauthenticated("malformed Authorization header; expected 'Bearer <token>'")
        }
        return String(parts[1])
    }
}
