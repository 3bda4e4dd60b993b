public import Foundation
public import TouchstoneDPoP

/// How an API checks DPoP-bound access tokens (RFC 9449 §7): a token with `cnf.jkt` is accepted only as
/// `Authorization: DPoP <token>` with a proof (`DPoP` header) from that key, for this request (`htm`, `htu`), recent,
/// carrying `ath`, its `jti` never seen before; never as a bearer token.
///
/// The `jti` of accepted proofs are kept in ``replayCache``: the default, ``InMemoryDPoPReplayCache``, is right for one
/// instance of the API. Several instances behind a load balancer must share one (implement ``DPoPReplayCache`` over
/// Redis, a database, … with an atomic "insert if absent"), or a proof captured at one could be replayed at another
/// within ``TouchstoneDPoP/DPoPVerifier/maximumAge``.
public struct DPoPBinding: Sendable {
    /// The proof checks (maximum age, clock skew, algorithms).
    public var verifier: DPoPVerifier
    public var replayCache: any DPoPReplayCache
    /// The API's public origin (`https://api.example.com`) that `htu` must name with the request's path; nil: the
    /// audience's origin when it is a URL, else `http://` and the request's `Host`.
    public var origin: String?
    /// Refuse bearer tokens altogether: every caller must hold a DPoP key.
    public var requireBoundTokens: Bool

    public init(
        verifier: DPoPVerifier = DPoPVerifier(),
        replayCache: any DPoPReplayCache = InMemoryDPoPReplayCache(),
        origin: String? = nil,
        requireBoundTokens: Bool = false
    ) {
        self.verifier = verifier
        self.replayCache = replayCache
        self.origin = origin
        self.requireBoundTokens = requireBoundTokens
    }

    /// The scheme a token came with.
    public enum Scheme: Sendable, Hashable { case bearer, dpop }

    /// Checks that the token came the way its binding demands.
    ///
    /// - Parameters:
    ///   - proofs: The request's `DPoP` header values (more than one is refused).
    ///   - url: The request's URL as ``origin`` names it (the query is ignored).
    /// - Returns: the thumbprint of the key the caller proved it holds; nil for a bearer token.
    /// - Throws: ``DPoPRefusal``.
    public func check(
        token: String,
        scheme: Scheme,
        claims: AccessTokenClaims,
        proofs: [String],
        method: String,
        url: String,
        at now: Date
    ) async throws(DPoPRefusal) -> String? {
        guard let thumbprint = claims.confirmationThumbprint else {
            guard scheme == .bearer else { throw .invalidToken("this token is not DPoP-bound: send it as Bearer") }
            guard !self.requireBoundTokens else { throw .invalidToken("this API accepts only DPoP-bound tokens") }
            return nil
        }
        guard scheme == .dpop else { throw .invalidToken("this token is DPoP-bound: send it as 'Authorization: DPoP' with a proof") }
        guard let proof = proofs.first else { throw .proof(DPoPError(.missing, "a DPoP-bound token needs a DPoP proof")) }
        guard proofs.count == 1 else { throw .proof(DPoPError(.malformed, "a request carries at most one DPoP header")) }
        let verified: VerifiedDPoPProof
        do throws(DPoPError) {
            verified = try self.verifier.verify(proof, method: method, url: url, accessToken: token, at: now)
        } catch {
            throw .proof(error)
        }
        guard verified.thumbprint == thumbprint else { throw .proof(DPoPError(.keyMismatch, "the proof is not from the token's key")) }
        let until = max(verified.issuedAt, now).addingTimeInterval(self.verifier.maximumAge + 1)
        let fresh: Bool
        do {
            fresh = try await self.replayCache.use(jti: verified.jti, thumbprint: verified.thumbprint, until: until, at: now)
        } catch {
            throw .unavailable("the DPoP replay cache failed: \(error)")
        }
        guard fresh else { throw .proof(DPoPError(.replayed, "this proof's jti was used before")) }
        return thumbprint
    }
}

/// Why ``DPoPBinding`` refused a request.
public enum DPoPRefusal: Error, Sendable, Hashable {
    /// `invalid_token`: a bound token as Bearer, a bearer token as DPoP, or a bearer token where only bound ones go.
    case invalidToken(String)
    /// `invalid_dpop_proof` (or `use_dpop_nonce`).
    case proof(DPoPError)
    /// The replay cache could not answer: the request cannot be checked (503).
    case unavailable(String)
}
