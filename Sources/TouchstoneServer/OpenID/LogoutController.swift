import Foundation
import HTTPTypes
import Hummingbird
import TouchstoneAuth
import TouchstoneOpenID
import TouchstoneStore

/// `GET|POST /oauth2/logout`: RP-Initiated Logout 1.0. Ends the browser's Touchstone session (and so its clients'
/// refresh tokens, and owes back-channel logouts), then returns to a registered `post_logout_redirect_uri` when the
/// `id_token_hint` names its client, or shows a signed-out page. An unregistered URI is never followed.
struct LogoutController {
    typealias Context = TouchstoneRequestContext

    let provider: OpenIDProvider
    let sessions: SessionManager
    let cookies: BrowserCookies
    let pages: OpenIDPages
    let limiter: RateLimiter

    func addRoutes(to router: Router<Context>) {
        router.get("/oauth2/logout", use: self.logout)
        router.post("/oauth2/logout", use: self.logout)
    }

    @Sendable func logout(request: Request, context: Context) async throws -> Response {
        try await self.limiter.checkAddress("oidc", client: context.client)
        let parameters: FormParameters
        let hint: String?, redirect: String?, state: String?, clientId: String?
        do {
            if request.method == .post {
                guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
                    return self.pages.message(title: "Sign-out error", "The sign-out request must be a form.", status: .badRequest)
                }
                parameters = try FormParameters(urlEncoded: try await request.collectFormBody(context: context))
            } else {
                parameters = try FormParameters(urlEncoded: request.uri.query ?? "")
            }
            hint = try parameters.single("id_token_hint")
            redirect = try parameters.single("post_logout_redirect_uri")
            state = try parameters.single("state")
            clientId = try parameters.single("client_id")
            for (name, value, limit) in [
                ("state", state, AuthorizationRequest.maximumStateLength), ("post_logout_redirect_uri", redirect, RedirectURI.maximumLength),
                ("client_id", clientId, AuthorizationRequest.maximumClientIdLength),
            ] where (value?.utf8.count ?? 0) > limit {
                throw OpenIDError.invalidRequest("parameter '\(name)' is longer than \(limit) bytes")
            }
        } catch let error as OpenIDError {
            return self.pages.message(title: "Sign-out error", "The sign-out request is malformed: \(error.reason).", status: .badRequest)
        }
        // The hint must be one of our ID tokens (its expiry does not matter here); it names the client.
        var hinted: IDTokenClaims?
        if let hint {
            let verified = try? await SignedToken.verify(hint, as: IDTokenClaims.self, type: "JWT",
                keys: try await self.provider.ring.verificationKeys())
            guard let claims = verified?.payload, claims.iss == self.provider.issuer else {
                return self.pages.message(title: "Sign-out error", "The id_token_hint is not an ID token of this provider.", status: .badRequest)
            }
            if let clientId, clientId != claims.aud {
                return self.pages.message(title: "Sign-out error", "client_id does not match the id_token_hint.", status: .badRequest)
            }
            hinted = claims
        }
        // End the browser's session, whoever asked.
        var setCookies: [String] = []
        if let token = self.cookies.value(self.cookies.sessionName, in: request) {
            if let identity = try? await self.sessions.authenticate(token: token) {
                try await self.sessions.revoke(identity)
                try await self.provider.audit.record(.sessionRevoked, userId: identity.user.id, reason: "oidc logout")
            }
            setCookies.append(self.cookies.clearSession())
        }
        if let redirect, let hinted, let client = try await self.provider.store.client(id: hinted.aud),
            client.postLogoutRedirectURIs.contains(redirect)
        {
            var headers: HTTPFields = [.location: AuthorizationController.location(redirect, [("state", state)]), .cacheControl: "no-store"]
            for cookie in setCookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
            return Response(status: .found, headers: headers)
        }
        let note = redirect == nil ? "" : " The app's return address was not followed: it is not registered, or the request did not name the app."
        return self.pages.message(title: "Signed out", "You are signed out." + note, status: .ok, isError: false, cookies: setCookies)
    }
}
