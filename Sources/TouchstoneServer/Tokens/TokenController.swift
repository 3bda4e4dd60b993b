import Foundation
import Hummingbird
import TouchstoneAuth
import TouchstoneDPoP
import TouchstoneOpenID
import TouchstoneStore

/// Access tokens for an app's own APIs: `POST /v1/session/token`, `GET /.well-known/jwks.json`,
/// `POST /v1/tokens/introspect`, and the signing keys of the admin API (`/v1/admin/signing-keys`).
struct TokenController {
    typealias Context = TouchstoneRequestContext

    let tokens: TokenService
    let ring: SigningKeyRing
    let store: any TouchstoneStore
    let jwksMaxAge: Int
    let dpop: DPoPGate

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        router.group("/v1/session").add(middleware: authenticator).post("/token", use: self.issue)
        router.get("/.well-known/jwks.json", use: self.jwks)
        let admin = router.group().add(middleware: AdminAuthenticator(store: self.store))
        admin.post("/v1/tokens/introspect", use: self.introspect)
        admin.get("/v1/admin/signing-keys", use: self.signingKeys)
        admin.post("/v1/admin/signing-keys/rotate", use: self.rotate)
    }

    struct Issued: Encodable {
        var accessToken: String
        var tokenType: String
        var expiresIn: Int
    }

    /// `POST /v1/session/token`: a short-lived access token for the caller's session; bound to a DPoP key (`cnf.jkt`,
    /// `tokenType` `DPoP`) when the request carries a proof (RFC 9449 §5). A session bound to a phone's proof key
    /// always gets tokens bound to that key (its proof, with `ath`, was checked with the session).
    @Sendable func issue(request: Request, context: Context) async throws -> JSONResponse<Issued> {
        let identity = try context.requireIdentity()
        var thumbprint = identity.session.dpopThumbprint
        if thumbprint == nil {
            do {
                thumbprint = try await self.dpop.proof(of: request, accessToken: nil)?.thumbprint
            } catch let error as DPoPError {
                throw APIError.dpop(error, status: .badRequest, nonce: self.dpop.nonceHeader)
            }
        }
        let (token, expiresIn) = try await self.tokens.issueAccessToken(for: identity, dpopThumbprint: thumbprint)
        var headers: HTTPFields = [.cacheControl: "no-store"]
        if let nonce = self.dpop.nonceHeader { headers[DPoPGate.nonceHeaderName] = nonce }
        return JSONResponse(.ok, Issued(accessToken: token, tokenType: thumbprint == nil ? "Bearer" : "DPoP", expiresIn: expiresIn), headers: headers)
    }

    /// `GET /.well-known/jwks.json`: the public keys of the signing key set (RFC 7517).
    @Sendable func jwks(request: Request, context: Context) async throws -> JSONResponse<PublicJWKSet> {
        JSONResponse(.ok, try await self.ring.jwks(), headers: [.cacheControl: "public, max-age=\(self.jwksMaxAge)"])
    }

    /// The answer of introspection (RFC 7662 §2.2): only `active: false` for any token that is not active.
    struct Introspection: Encodable {
        var active: Bool
        var sub: String?
        var exp: Int64?
        var iat: Int64?
        var sid: String?
        var amr: [String]?
        var auth_time: Int64?
        var client_id: String?
        var token_type: String?
        var iss: String?
        var aud: [String]?
        var jti: String?
        var scope: String?
        var acr: String?
        /// RFC 9449 §6.2: `{"jkt"}` of a DPoP-bound token (whose `token_type` is then `DPoP`).
        var cnf: Confirmation?

        struct Confirmation: Encodable {
            var jkt: String
        }

        static let inactive = Introspection(active: false)

        init(active: Bool) {
            self.active = active
        }

        init(_ claims: AccessTokenClaims) {
            self.active = true
            self.sub = claims.subject
            self.exp = claims.expiresAt
            self.iat = claims.issuedAt
            self.sid = claims.sessionId
            self.amr = claims.methods
            self.auth_time = claims.authenticatedAt
            self.client_id = claims.clientId
            self.token_type = claims.confirmationThumbprint == nil ? "Bearer" : "DPoP"
            self.cnf = claims.confirmationThumbprint.map { Confirmation(jkt: $0) }
            self.iss = claims.issuer
            self.aud = claims.audience
            self.jti = claims.tokenId
            self.scope = claims.scope
            self.acr = claims.authenticationContext
        }
    }

    /// `POST /v1/tokens/introspect` (admin key): `token=` as a form, or `{"token"}` as JSON.
    @Sendable func introspect(request: Request, context: Context) async throws -> JSONResponse<Introspection> {
        let token = try await Self.introspectedToken(request, context: context)
        guard let claims = try await self.tokens.introspect(token) else {
            return JSONResponse(.ok, .inactive, headers: [.cacheControl: "no-store"])
        }
        return JSONResponse(.ok, Introspection(claims), headers: [.cacheControl: "no-store"])
    }

    static func introspectedToken(_ request: Request, context: Context) async throws -> String {
        let body = try await request.collectJSONBody(context: context)
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let token: String?
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            do {
                token = try FormParameters(urlEncoded: String(decoding: body, as: UTF8.self)).single("token")
            } catch {
                throw APIError.invalidRequest(error.reason)
            }
        } else {
            struct Input: Decodable {
                var token: String

                enum CodingKeys: CodingKey { case token }

                init(from decoder: any Decoder) throws {
                    let container = try decoder.container(keyedBy: CodingKeys.self)
                    self.token = try container.decodeString(.token, maxLength: SignedToken.maximumLength)
                }
            }
            token = try JSONDecoder().decodeOrInvalid(Input.self, from: Data(body)).token
        }
        guard let token, !token.isEmpty else { throw APIError.invalidRequest("field 'token' is required") }
        guard token.utf8.count <= SignedToken.maximumLength else { throw APIError.invalidRequest("field 'token' is too long") }
        return token
    }

    // MARK: Admin

    struct SigningKeyList: Encodable {
        var keys: [SigningKeyInfo]
    }

    /// `GET /v1/admin/signing-keys`: every key, newest first.
    @Sendable func signingKeys(request: Request, context: Context) async throws -> JSONResponse<SigningKeyList> {
        let keys = try await self.ring.keys(fresh: true)
        return JSONResponse(.ok, SigningKeyList(keys: SigningKeyInfo.list(keys, schedule: self.ring.schedule, now: self.ring.now())))
    }

    struct RotateInput: Decodable {
        var immediately: Bool?
    }

    /// `POST /v1/admin/signing-keys/rotate` `{"immediately"?}`: a new key, published now, signing after the lead time
    /// (or at once).
    @Sendable func rotate(request: Request, context: Context) async throws -> JSONResponse<SigningKeyInfo> {
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let input = body.readableBytes == 0 ? RotateInput() : try JSONDecoder().decodeOrInvalid(RotateInput.self, from: Data(body.readableBytesView))
        let made = try await self.ring.rotate(immediately: input.immediately ?? false, actor: "admin:\(context.adminKey?.name ?? "?")")
        let keys = try await self.ring.keys()
        guard let resource = SigningKeyInfo.list(keys, schedule: self.ring.schedule, now: self.ring.now()).first(where: { $0.kid == made.kid })
        else {
            throw StoreError.unavailable("the new signing key was not read back")
        }
        return JSONResponse(.created, resource)
    }
}
