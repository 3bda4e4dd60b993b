import Foundation
import Hummingbird
import Logging
import TouchstoneStore

/// Turns every error into the API's error body, so that nothing answers in another shape.
///
/// Internal details go to the log; the client sees only the code and a generic message.
///
/// The router's own 404 (no route for the path and method) becomes 405 `method_not_allowed` with `Allow` when the path
/// is a route's and only the method is wrong.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The methods of each route; nil: every unrouted request is a 404.
    var allowed: AllowedMethods? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return try error.response(from: request, context: context)
        } catch let error as HTTPError where error.status == .notFound {
            if let methods = self.allowed?.methods(for: request.uri.path), !methods.isEmpty, !methods.contains(request.method) {
                return try APIError.methodNotAllowed(request.method, allowed: methods).response(from: request, context: context)
            }
            return try APIError.notFound.response(from: request, context: context)
        } catch {
            return try Self.apiError(for: error, context: context).response(from: request, context: context)
        }
    }

    static func apiError(for error: any Error, context: Context) -> APIError {
        if let error = error as? any HTTPResponseError {
            switch error.status {
            case .notFound: return .notFound
            case .contentTooLarge: return .payloadTooLarge(limit: context.maxUploadSize)
            case .badRequest: return .invalidRequest("malformed request")
            default:
                if error.status.code < 500 {
                    return APIError(error.status, code: "http_\(error.status.code)", message: error.status.reasonPhrase)
                }
            }
        }
        if let error = error as? StoreError, error == .unavailable {
            context.logger.error("storage unavailable: \(error)")
            return .storageUnavailable
        }
        context.logger.error("unhandled error: \(String(reflecting: error))")
        return .internalError
    }
}
