import Hummingbird

/// Applies the configured request body limit to every request.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        context.maxUploadSize = self.limit
        return try await next(request, context)
    }
}
