import Hummingbird
import TouchstoneOpenID

/// `GET /.well-known/openid-configuration` (OpenID Connect Discovery 1.0) and
/// `GET /.well-known/oauth-authorization-server` (RFC 8414): the same document.
struct DiscoveryController {
    typealias Context = TouchstoneRequestContext

    let metadata: ProviderMetadata

    func addRoutes(to router: Router<Context>) {
        router.get("/.well-known/openid-configuration", use: self.document)
        router.get("/.well-known/oauth-authorization-server", use: self.document)
    }

    @Sendable func document(request: Request, context: Context) async throws -> Response {
        var response = TokenEndpointController.json(.ok, self.metadata)
        response.headers[.cacheControl] = "public, max-age=3600"
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }
}
