public import Hummingbird
public import AsyncHTTPClient
public import Foundation
import HTTPTypes
import TouchstoneDPoP

/// A request context that can carry the caller an access token identified.
public protocol TouchstoneAuthRequestContext: RequestContext {
    /// Set by ``TouchstoneAuthMiddleware`` on the routes it guards.
    var touchstoneCaller: TouchstoneCaller? { get set }
}

extension TouchstoneAuthRequestContext {
    /// The caller, or 401 when no verified token put one in the context.
    public func requireTouchstoneCaller() throws -> TouchstoneCaller {
        guard let caller = self.touchstoneCaller else {
            throw TouchstoneAuthError.invalidToken("no verified access token")
        }
        return caller
    }
}

/// A ready-made request context for services that need nothing else.
public struct TouchstoneAuthContext: TouchstoneAuthRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var touchstoneCaller: TouchstoneCaller?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.touchstoneCaller = nil
    }
}

/// Requires `Authorization: Bearer <access token>`, or `Authorization: DPoP <access token>` with a `DPoP` proof from
/// the key of a DPoP-bound token (RFC 9449), and puts the verified caller in the context.
///
/// ```swift
/// let router = Router(context: TouchstoneAuthContext.self)
/// router.add(middleware: TouchstoneAuthMiddleware(issuer: "https://auth.example.com", audience: "https://api.example.com"))
/// router.get("/me") { _, context in try context.requireTouchstoneCaller().userId }
/// ```
///
/// A missing, malformed or refused token gets 401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750)
/// and `{"error": {"code", "message"}}`. A bound token sent as a bearer token is refused; a refused proof gets
/// `WWW-Authenticate: DPoP algs="…", error="invalid_dpop_proof"` (``DPoPBinding`` says what is checked).
public struct TouchstoneAuthMiddleware<Context: TouchstoneAuthRequestContext>: RouterMiddleware {
    public let verifier: AccessTokenVerifier
    /// The DPoP checks; a bound token is never accepted without them.
    public let dpop: DPoPBinding
    let now: @Sendable () -> Date

    public init(verifier: AccessTokenVerifier, dpop: DPoPBinding = DPoPBinding(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.verifier = verifier
        self.dpop = dpop
        self.now = now
    }

    /// Verifies tokens of `issuer` for `audience`, with the issuer's JWKS fetched and cached.
    public init(issuer: String, audience: String, leeway: TimeInterval = 30, dpop: DPoPBinding = DPoPBinding(), client: HTTPClient = .shared) {
        self.verifier = AccessTokenVerifier(
            keys: JWKSCache(issuer: issuer, client: client),
            issuer: issuer,
            audiences: [audience],
            leeway: leeway
        )
        self.dpop = dpop
        self.now = { Date() }
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization] else {
            throw TouchstoneAuthError.missingToken
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let scheme: DPoPBinding.Scheme
        switch parts.count == 2 ? parts[0].lowercased() : "" {
        case "bearer": scheme = .bearer
        case "dpop": scheme = .dpop
        default: throw TouchstoneAuthError.invalidToken("expected 'Authorization: Bearer <token>' or 'Authorization: DPoP <token>'")
        }
        let token = String(parts[1])
        let claims: AccessTokenClaims
        do {
            claims = try await self.verifier.verify(token)
        } catch {
            throw TouchstoneAuthError.invalidToken("\(error.code): \(error.reason)", scheme: scheme)
        }
        let thumbprint: String?
        do throws(DPoPRefusal) {
            thumbprint = try await self.dpop.check(
                token: token,
                scheme: scheme,
                claims: claims,
                proofs: request.headers[values: TouchstoneAuthError.dpopHeader],
                method: request.method.rawValue,
                url: self.url(of: request),
                at: self.now()
            )
        } catch {
            switch error {
            case .invalidToken(let reason):
                throw TouchstoneAuthError.invalidToken(reason, scheme: claims.confirmationThumbprint == nil ? .bearer : .dpop)
            case .proof(let refusal): throw TouchstoneAuthError.invalidProof(refusal)
            case .unavailable(let reason): throw TouchstoneAuthError.unavailable(reason)
            }
        }
        var context = context
        context.touchstoneCaller = TouchstoneCaller(claims: claims, dpopThumbprint: thumbprint)
        return try await next(request, context)
    }

    /// The URL `htu` must name: the configured origin, else the audience's, else the request's `Host`, and the path.
    func url(of request: Request) -> String {
        if let origin = self.dpop.origin { return origin + request.uri.path }
        if let audience = self.verifier.audiences?.first, let url = URL(string: audience), let scheme = url.scheme, ["http", "https"].contains(scheme),
            let host = url.host
        {
            return "\(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")" + request.uri.path
        }
        return "http://\(request.head.authority ?? "")" + request.uri.path
    }
}

/// Requires more of the caller than a valid token (after ``TouchstoneAuthMiddleware``): a recent sign-in, a device key
/// or passkey. A caller who falls short gets 401 `insufficient_user_authentication` (RFC 9470), with `max_age` when
/// recency is what is missing, so the app can sign the user in again and retry.
public struct TouchstoneRequirementMiddleware<Context: TouchstoneAuthRequestContext>: RouterMiddleware {
    let maxAge: TimeInterval?
    let deviceKeyOrPasskey: Bool
    let now: @Sendable () -> Date

    /// - Parameters:
    ///   - maxAge: The session must have been authenticated at most this many seconds ago.
    ///   - deviceKeyOrPasskey: The session must come from a biometric device key or a passkey.
    public init(maxAge: TimeInterval? = nil, deviceKeyOrPasskey: Bool = false, now: @escaping @Sendable () -> Date = { Date() }) {
        self.maxAge = maxAge
        self.deviceKeyOrPasskey = deviceKeyOrPasskey
        self.now = now
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let caller = try context.requireTouchstoneCaller()
        if self.deviceKeyOrPasskey && !caller.signedInWithDeviceKeyOrPasskey {
            throw TouchstoneAuthError.insufficientAuthentication("sign in with a device key or a passkey", maxAge: self.maxAge)
        }
        if let maxAge = self.maxAge, !caller.authenticated(within: maxAge, now: self.now()) {
            throw TouchstoneAuthError.insufficientAuthentication("sign in again: the last sign-in is too old", maxAge: maxAge)
        }
        return try await next(request, context)
    }
}

/// The 401 answers of the middlewares, as `{"error": {"code", "message"}}` with `WWW-Authenticate`.
public struct TouchstoneAuthError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status = .unauthorized
    /// `invalid_token`, `invalid_dpop_proof`, `insufficient_user_authentication` (401) or `temporarily_unavailable`
    /// (503: the DPoP replay cache failed).
    public let code: String
    public let message: String
    let challenge: String

    static let dpopHeader = HTTPField.Name("DPoP")!
    static let dpopChallenge = #"DPoP algs="\#(DPoPVerifier.supportedAlgorithms.sorted().joined(separator: " "))""#

    static let missingToken = TouchstoneAuthError(
        code: "invalid_token", message: "missing Authorization header (Bearer or DPoP)", challenge: "Bearer, \(dpopChallenge)")

    static func invalidToken(_ message: String, scheme: DPoPBinding.Scheme = .bearer) -> TouchstoneAuthError {
        let challenge = scheme == .bearer ? #"Bearer error="invalid_token""# : #"\#(dpopChallenge), error="invalid_token""#
        return TouchstoneAuthError(code: "invalid_token", message: message, challenge: challenge)
    }

    /// RFC 9449 §7.1: the proof is missing, malformed, not for this request, replayed or from another key.
    static func invalidProof(_ error: DPoPError) -> TouchstoneAuthError {
        TouchstoneAuthError(code: error.oauthError, message: error.reason, challenge: #"\#(dpopChallenge), error="\#(error.oauthError)""#)
    }

    static func unavailable(_ message: String) -> TouchstoneAuthError {
        TouchstoneAuthError(status: .serviceUnavailable, code: "temporarily_unavailable", message: message, challenge: "")
    }

    static func insufficientAuthentication(_ message: String, maxAge: TimeInterval?) -> TouchstoneAuthError {
        var challenge = #"Bearer error="insufficient_user_authentication", error_description="\#(message)""#
        if let maxAge { challenge += ", max_age=\(Int(maxAge))" }
        return TouchstoneAuthError(code: "insufficient_user_authentication", message: message, challenge: challenge)
    }

    struct Body: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }

        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try JSONEncoder().encode(Body(error: .init(code: self.code, message: self.message)))
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        if !self.challenge.isEmpty { headers[.wwwAuthenticate] = self.challenge }
        return Response(status: self.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
