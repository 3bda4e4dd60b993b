import Foundation
import Hummingbird
import Logging
import TouchstoneAuth
import TouchstoneDPoP
import TouchstoneOpenID
import TouchstoneStore

/// The provider's back-end endpoints: `POST /oauth2/token` (codes and refresh tokens), `POST /oauth2/revoke` (RFC
/// 7009), `POST /oauth2/introspect` (RFC 7662) and `GET|POST /oauth2/userinfo`. Errors use OAuth's shape
/// `{"error", "error_description"}` (RFC 6749 §5.2) and every answer `Cache-Control: no-store`.
struct TokenEndpointController {
    typealias Context = TouchstoneRequestContext

    let provider: OpenIDProvider
    let service: OpenIDTokenService
    let tokens: TokenService
    let limiter: RateLimiter
    /// CIBA (`/oauth2/bc-authorize` and its grant).
    let backchannel: BackchannelAuthentication
    /// DPoP proofs at the token endpoint and UserInfo.
    let dpop: DPoPGate

    func addRoutes(to router: Router<Context>) {
        router.post("/oauth2/token") { request, context in try await self.oauth(request, context) { try await self.token($0, $1) } }
        router.post("/oauth2/bc-authorize") { request, context in
            try await self.oauth(request, context) { try await self.backchannelAuthorize($0, $1) }
        }
        router.post("/oauth2/revoke") { request, context in try await self.oauth(request, context) { try await self.revoke($0, $1) } }
        router.post("/oauth2/introspect") { request, context in
            try await self.oauth(request, context) { try await self.introspect($0, $1) }
        }
        router.get("/oauth2/userinfo") { request, context in try await self.oauth(request, context) { try await self.userinfo($0, $1) } }
        router.post("/oauth2/userinfo") { request, context in try await self.oauth(request, context) { try await self.userinfo($0, $1) } }
    }

    // MARK: Token

    private func token(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await self.form(request, context)
        let client = try await self.authenticate(request, form, context)
        guard let grantType = try form.single("grant_type") else { throw OAuthFailure(.invalidRequest("parameter 'grant_type' is missing")) }
        let grants = ["authorization_code", "refresh_token", BackchannelAuthenticationRequest.grantType]
        guard grants.contains(grantType) else {
            throw OAuthFailure(.unsupportedGrantType("grant_type must be authorization_code, refresh_token or \(BackchannelAuthenticationRequest.grantType)"))
        }
        // The proof is checked before the grant is touched, and its jti recorded in the grant's own transaction: a
        // refused or replayed proof, or a nonce challenge, uses up no code and no refresh token.
        let proof = try self.dpop.unrecordedProof(of: request, accessToken: nil)
        if proof == nil && client.record.dpopBoundAccessTokens {
            throw DPoPError(.missing, "this client gets tokens only with a DPoP proof")
        }
        let issued: OpenIDTokenService.Issued
        switch grantType {
        case "authorization_code":
            issued = try await self.service.exchange(
                code: try form.required("code"),
                redirectURI: try form.required("redirect_uri"),
                verifier: try form.required("code_verifier"),
                client: client.record,
                proof: proof
            )
        case "refresh_token":
            issued = try await self.service.refresh(
                token: try form.required("refresh_token"),
                scope: try form.single("scope"),
                client: client.record,
                proof: proof
            )
        default:
            let authReqId = try form.required("auth_req_id")
            try await proof?.record(in: self.dpop.store)
            issued = try await self.backchannel.token(authReqId: authReqId, client: client.record, dpopThumbprint: proof?.thumbprint)
        }
        // Written without JSONEncoder: the token endpoint is the provider's hot path.
        var writer = JSONWriter(capacity: 2048)
        writer.object { writer in
            writer.member("access_token", issued.tokens.accessToken)
            writer.member("token_type", issued.tokens.dpopBound ? "DPoP" : "Bearer")
            writer.member("expires_in", issued.tokens.expiresIn)
            writer.member("scope", issued.tokens.scope)
            if let idToken = issued.tokens.idToken { writer.member("id_token", idToken) }
            if let refresh = issued.refreshToken { writer.member("refresh_token", refresh) }
        }
        var response = Self.json(.ok, writer)
        if let nonce = self.dpop.nonceHeader { response.headers[DPoPGate.nonceHeaderName] = nonce }
        return response
    }

    // MARK: Backchannel authentication (CIBA)

    /// `POST /oauth2/bc-authorize` (CIBA Core 1.0 §7): a confidential client registered with `--ciba` asks for a
    /// user's approval on their phone → 200 `{"auth_req_id", "expires_in", "interval"}`.
    private func backchannelAuthorize(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await self.form(request, context)
        let client = try await self.authenticate(request, form, context, allowPublic: false)
        do {
            let started = try await self.backchannel.authorize(form, client: client.record)
            var writer = JSONWriter(capacity: 256)
            writer.object { writer in
                writer.member("auth_req_id", started.authReqId)
                writer.member("expires_in", started.expiresIn)
                writer.member("interval", started.interval)
            }
            return Self.json(.ok, writer)
        } catch let failure as OAuthFailure where failure.error.code == "access_denied" {
            // §13: access_denied is 403 here.
            return Self.error(failure, status: .forbidden)
        }
    }

    // MARK: Revocation

    private func revoke(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await self.form(request, context)
        let client = try await self.authenticate(request, form, context)
        let token = try form.required("token")
        if let hint = try form.single("token_type_hint"), !["access_token", "refresh_token"].contains(hint) {
            throw OAuthFailure(.unsupportedTokenType("token_type_hint must be access_token or refresh_token"))
        }
        try await self.service.revoke(token: token, client: client.record)
        return Response(status: .ok, headers: [.cacheControl: "no-store", .contentLength: "0"])
    }

    // MARK: Introspection

    private func introspect(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await self.form(request, context)
        _ = try await self.authenticate(request, form, context, allowPublic: false)
        let token = try form.required("token")
        guard token.utf8.count <= SignedToken.maximumLength, let claims = try await self.tokens.activeClaims(token) else {
            return Self.json(.ok, TokenController.Introspection.inactive)
        }
        return Self.json(.ok, TokenController.Introspection(claims))
    }

    // MARK: UserInfo

    /// `GET|POST /oauth2/userinfo` with `Authorization: Bearer`, or `Authorization: DPoP` and a proof from the key of a
    /// DPoP-bound token (RFC 9449 §7): the claims the token's scopes allow (OpenID Connect Core §5.3). A bad, expired or
    /// revoked token is 401 with `WWW-Authenticate: Bearer error="invalid_token"` (`DPoP …` for the DPoP scheme); a
    /// bound token sent as a bearer token is refused the same way, a refused proof with `invalid_dpop_proof` or
    /// `use_dpop_nonce`.
    private func userinfo(_ request: Request, _ context: Context) async throws -> Response {
        guard let (scheme, token) = DPoPGate.accessToken(of: request) else {
            return self.resourceError(.unauthorized, scheme: nil, nil, "an access token is required")
        }
        guard token.utf8.count <= SignedToken.maximumLength, let (claims, user) = try await self.tokens.activeClaimsAndUser(token) else {
            return self.resourceError(.unauthorized, scheme: scheme, "invalid_token", "the access token is invalid, expired or revoked")
        }
        do {
            _ = try await self.dpop.checkPossession(of: token, scheme: scheme, boundTo: claims.confirmationThumbprint, request: request)
        } catch DPoPGate.ResourceFailure.invalidToken(let reason) {
            return self.resourceError(.unauthorized, scheme: claims.confirmationThumbprint == nil ? .bearer : .dpop, "invalid_token", reason)
        } catch DPoPGate.ResourceFailure.proof(let error) {
            return self.resourceError(.unauthorized, scheme: .dpop, error.oauthError, error.reason)
        }
        let scopes = (claims.scope ?? "").split(separator: " ").map(String.init)
        guard claims.grantId != nil, scopes.contains("openid") else {
            return self.resourceError(.forbidden, scheme: scheme, "insufficient_scope", "the access token was not granted the openid scope")
        }
        var writer = JSONWriter()
        writer.object { writer in
            writer.member("sub", user.id)
            if scopes.contains("email") {
                writer.member("email", user.email)
                writer.member("email_verified", user.emailVerifiedAt != nil)
            }
            if scopes.contains("profile"), let name = user.displayName { writer.member("name", name) }
        }
        return Self.json(.ok, writer)
    }

    // MARK: Plumbing

    /// The calling client, within its rate limit; a failed authentication counts against the caller's address.
    private func authenticate(_ request: Request, _ form: FormParameters, _ context: Context, allowPublic: Bool = true) async throws
        -> OpenIDProvider.AuthenticatedClient
    {
        do {
            let client = try await self.provider.authenticateClient(authorization: request.headers[.authorization], form: form,
                allowPublic: allowPublic)
            try await self.limiter.checkClient(client.id)
            return client
        } catch let failure as OAuthFailure where failure.error.code == "invalid_client" {
            try await self.limiter.checkAddress("oauth_client_auth", client: context.client)
            throw failure
        }
    }

    /// Runs an OAuth endpoint: any failure becomes OAuth's error shape, never the v1 API's.
    private func oauth(_ request: Request, _ context: Context, _ body: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await body(request, context)
        } catch let failure as OAuthFailure {
            return Self.error(failure)
        } catch let refused as DPoPError {
            // RFC 9449 §5: `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce to use (400 both).
            let error: OpenIDError = refused.oauthError == "use_dpop_nonce" ? .useDPoPNonce(refused.reason) : .invalidDPoPProof(refused.reason)
            var response = Self.error(OAuthFailure(error))
            if let nonce = self.dpop.nonceHeader { response.headers[DPoPGate.nonceHeaderName] = nonce }
            return response
        } catch let error as OpenIDError {
            return Self.error(OAuthFailure(error))
        } catch let error as APIError where error.status == .tooManyRequests {
            var response = Self.error(OAuthFailure(.invalidRequest("too many requests; try again later")), status: .tooManyRequests)
            for field in error.headers { response.headers.append(field) }
            return response
        } catch let error as APIError where error.status == .contentTooLarge {
            return Self.error(OAuthFailure(.invalidRequest(error.message)), status: .contentTooLarge)
        } catch let error as APIError where error.status == .serviceUnavailable {
            return Self.error(OAuthFailure(.temporarilyUnavailable("the provider cannot answer now; try again")), status: .serviceUnavailable)
        } catch let error as APIError where (400..<500).contains(error.status.code) {
            return Self.error(OAuthFailure(.invalidRequest(error.message)), status: error.status)
        } catch let error as StoreError where error == .unavailable {
            context.logger.error("storage unavailable: \(error)")
            return Self.error(OAuthFailure(.temporarilyUnavailable("the provider cannot answer now; try again")), status: .serviceUnavailable)
        }
    }

    private func form(_ request: Request, _ context: Context) async throws -> FormParameters {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            throw OAuthFailure(.invalidRequest("the body must be application/x-www-form-urlencoded"))
        }
        return try FormParameters(urlEncoded: try await request.collectFormBody(context: context))
    }

    static func error(_ failure: OAuthFailure, status: HTTPResponse.Status? = nil) -> Response {
        struct Body: Encodable {
            var error: String
            var error_description: String
        }
        let status = status ?? (failure.error.code == "invalid_client" ? .unauthorized : .badRequest)
        var response = Self.json(status, Body(error: failure.error.code, error_description: failure.error.reason))
        if status == .unauthorized && failure.basic {
            response.headers[.wwwAuthenticate] = "Basic realm=\"touchstone\""
        }
        return response
    }

    static func json(_ status: HTTPResponse.Status, _ writer: JSONWriter) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .init("Pragma")!: "no-cache"],
            body: ResponseBody(byteBuffer: writer.buffer)
        )
    }

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .init("Pragma")!: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// A refusal at UserInfo: the OAuth body, and the `WWW-Authenticate` challenge of the scheme (both when none was
    /// named; RFC 6750 §3, RFC 9449 §7.1), with `DPoP-Nonce` when nonces are demanded.
    private func resourceError(_ status: HTTPResponse.Status, scheme: DPoPGate.Scheme?, _ code: String?, _ description: String) -> Response {
        struct Body: Encodable {
            var error: String
            var error_description: String
        }
        var response = Self.json(status, Body(error: code ?? "invalid_request", error_description: description))
        response.headers[.wwwAuthenticate] = DPoPGate.challenge(scheme: scheme, error: code, description: code == nil ? nil : description)
        if scheme != .bearer, let nonce = self.dpop.nonceHeader { response.headers[DPoPGate.nonceHeaderName] = nonce }
        return response
    }
}
