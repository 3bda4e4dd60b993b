public import Hummingbird
public import AsyncHTTPClient
public import Foundation
import HTTPTypes

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

/// Requires `Authorization: Bearer <access token>` and puts the verified caller in the context.
///
/// ```swift
/// let router = Router(context: TouchstoneAuthContext.self)
/// router.add(middleware: TouchstoneAuthMiddleware(issuer: "https://auth.example.com", audience: "https://api.example.com"))
/// router.get("/me") { _, context in try context.requireTouchstoneCaller().userId }
/// ```
///
/// A missing, malformed or refused token gets 401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750)
/// and `{"error": {"code", "message"}}`.
public struct TouchstoneAuthMiddleware<Context: TouchstoneAuthRequestContext>: RouterMiddleware {
    public let verifier: AccessTokenVerifier

    public init(verifier: AccessTokenVerifier) {
        self.verifier = verifier
    }

    /// Verifies tokens of `issuer` for `audience`, with the issuer's JWKS fetched and cached.
    public init(issuer: String, audience: String, leeway: TimeInterval = 30, client: HTTPClient = .shared) {
        self.verifier = AccessTokenVerifier(
            keys: JWKSCache(issuer: issuer, client: client),
            issuer: issuer,
            audiences: [audience],
            leeway: leeway
        )
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization] else {
            throw TouchstoneAuthError.missingToken
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw TouchstoneAuthError.invalidToken("expected 'Authorization: Bearer <token>'")
        }
        let claims: AccessTokenClaims
        do {
            claims = try await self.verifier.verify(String(parts[1]))
        } catch {
            throw TouchstoneAuthError.invalidToken("\(error.code): \(error.reason)")
        }
        var context = context
        context.touchstoneCaller = TouchstoneCaller(claims: claims)
        return try await next(request, context)
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
    public let status: HTTPResponse.Status = .unauthorized
    /// `invalid_token` or `insufficient_user_authentication`.
    public let code: String
    public let message: String
    let challenge: String

    static let missingToken = TouchstoneAuthError(code: "invalid_token", message: "missing Authorization: Bearer header", challenge: "Bearer")

    static func invalidToken(_ message: String) -> TouchstoneAuthError {
        TouchstoneAuthError(code: "invalid_token", message: message, challenge: #"Bearer error="invalid_token""#)
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
        headers[.wwwAuthenticate] = self.challenge
        return Response(status: self.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
