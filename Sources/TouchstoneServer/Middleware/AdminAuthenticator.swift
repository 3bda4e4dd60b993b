import Hummingbird
import TouchstoneStore

/// Requires `Authorization: Bearer <admin key>` naming an unrevoked admin key. A user's session token is not one:
/// it gets 403 `admin_key_required`.
struct AdminAuthenticator: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let store: any TouchstoneStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthenticated("missing Authorization: Bearer header")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty, parts[1].utf8.count <= 256 else {
            throw APIError.unauthenticated("malformed Authorization header; expected 'Bearer <token>'")
        }
        // Looked up by SHA-256 hash: the key itself is never stored or compared.
        guard let key = try await self.store.adminKey(keyHash: Secrets.hash(token: String(parts[1]))) else {
            throw APIError.adminKeyRequired
        }
        var context = context
        context.adminKey = key
        return try await next(request, context)
    }
}
