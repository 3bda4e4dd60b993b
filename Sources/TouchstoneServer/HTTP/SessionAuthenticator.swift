import Hummingbird
import TouchstoneDPoP
import TouchstoneStore

/// Requires `Authorization: Bearer <token>` naming a live session, or `Authorization: DPoP <token>` with a DPoP proof
/// from the key a phone's session is bound to (issue #43), and puts the session in the context.
struct SessionAuthenticator: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let sessions: SessionManager
    let dpop: DPoPGate

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        context.identity = try await self.authenticate(request)
        return try await next(request, context)
    }

    /// The session of `request`'s `Authorization` header. A session bound to a proof key (a phone's own sign-in) needs
    /// the `DPoP` scheme and a proof from that key carrying `ath`; any other session is a bearer token.
    ///
    /// - Throws: 401 `unauthenticated` (no such live session), `invalid_dpop_proof` (a bound session as Bearer, an
    ///   unbound one as DPoP, a missing, refused or replayed proof, another key's) or `use_dpop_nonce` (with
    ///   `DPoP-Nonce`).
    func authenticate(_ request: Request) async throws -> AuthenticatedSession {
        guard let (scheme, token) = DPoPGate.accessToken(of: request), token.utf8.count <= 256 else {
            throw APIError.unauthenticated(
                request.headers[.authorization] == nil
                    ? "missing Authorization: Bearer header" : "malformed Authorization header; expected 'Bearer <token>' or 'DPoP <token>'")
        }
        let dpop = self.dpop
        return try await self.sessions.authenticate(token: token) { session in
            do {
                _ = try await dpop.checkPossession(of: token, scheme: scheme, boundTo: session.dpopThumbprint, request: request, noun: "session")
            } catch DPoPGate.ResourceFailure.invalidToken(let reason) {
                throw APIError.dpop(DPoPError(.missing, reason), status: .unauthorized, nonce: dpop.nonceHeader)
            } catch DPoPGate.ResourceFailure.proof(let error) {
                throw APIError.dpop(error, status: .unauthorized, nonce: dpop.nonceHeader)
            }
        }
    }
}

extension Request {
    /// The token of `Authorization: Bearer <token>`; 401 `unauthenticated` when the header is missing or malformed.
    func bearerToken() throws -> String {
        guard let header = self.headers[.authorization] else {
            throw APIError.unauthenticated("missing Authorization: Bearer header")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty, parts[1].utf8.count <= 256 else {
            throw APIError.unauthenticated("malformed Authorization header; expected 'Bearer <token>'")
        }
        return String(parts[1])
    }
}
