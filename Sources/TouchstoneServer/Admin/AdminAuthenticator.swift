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
        guard let key = try await AdminKeys.find(try request.bearerToken(), store: self.store) else {
            throw APIError.adminKeyRequired
        }
        var context = context
        context.adminKey = key
        return try await next(request, context)
    }
}
