import Hummingbird

/// The limits every request meets before a handler sees it: the configured body limit (413 past it), and no control
/// character in a query parameter (400 `invalid_request`). A query's values are percent-decoded, so `%00` is a NUL
/// that a database would cut the text at (SQLite bound up to a terminator) or refuse (PostgreSQL): no identifier,
/// filter or cursor has one. JSON bodies meet the same rule field by field (`Request+json.swift`).
struct RequestLimitsMiddleware: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if request.uri.query != nil {
            for (name, value) in request.uri.queryParameters {
                do throws(FieldError) {
                    try InputRules.noControlCharacters(String(name), field: "a parameter's name", kind: "")
                    try InputRules.noControlCharacters(String(value), field: String(name), kind: "parameter ")
                } catch {
                    throw APIError.invalidRequest(error.message)
                }
            }
        }
        var context = context
        context.maxUploadSize = self.limit
        return try await next(request, context)
    }
}
