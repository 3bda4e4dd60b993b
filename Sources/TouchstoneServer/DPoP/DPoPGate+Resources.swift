import Hummingbird
import TouchstoneDPoP

/// The resource side (RFC 9449 §7): a route that takes an access token accepts `Authorization: Bearer <token>` for a
/// bearer token and `Authorization: DPoP <token>` with a proof (with `ath`) from the key of a bound one (`cnf.jkt`),
/// never a bound token as a bearer token.
extension DPoPGate {
    /// How an access token came.
    enum Scheme: Sendable { case bearer, dpop }

    /// The scheme and token of `Authorization`; nil when it is missing or neither `Bearer` nor `DPoP`.
    static func accessToken(of request: Request) -> (scheme: Scheme, token: String)? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        let token = String(parts[1].trimmingASCIISpaces)
        guard !token.isEmpty else { return nil }
        switch parts[0].lowercased() {
        case "bearer": return (.bearer, token)
        case "dpop": return (.dpop, token)
        default: return nil
        }
    }

    /// Why a request with an access token is refused at a resource: the token itself, or its proof.
    enum ResourceFailure: Error {
        /// `invalid_token`: the token is not for this scheme (a bound token as `Bearer`, a bearer token as `DPoP`).
        case invalidToken(String)
        /// `invalid_dpop_proof` or `use_dpop_nonce`.
        case proof(DPoPError)
    }

    /// Checks that a token bound to `thumbprint` (nil: a bearer token) came the way its binding demands, with a valid
    /// proof from its key. `noun` names the token in the refusals (`token`, `session`).
    func checkPossession(of token: String, scheme: Scheme, boundTo thumbprint: String?, request: Request, noun: String = "token") async throws
        -> VerifiedDPoPProof?
    {
        guard let thumbprint else {
            guard scheme == .bearer else { throw ResourceFailure.invalidToken("this \(noun) is not DPoP-bound: send it as Bearer") }
            return nil
        }
        guard scheme == .dpop else {
            throw ResourceFailure.invalidToken("this \(noun) is DPoP-bound: send it as 'Authorization: DPoP' with a proof")
        }
        let proof: VerifiedDPoPProof?
        do {
            proof = try await self.proof(of: request, accessToken: token)
        } catch let error as DPoPError {
            throw ResourceFailure.proof(error)
        }
        guard let proof else { throw ResourceFailure.proof(DPoPError(.missing, "a DPoP-bound token needs a DPoP proof")) }
        guard proof.thumbprint == thumbprint else { throw ResourceFailure.proof(DPoPError(.keyMismatch, "the proof is not from the token's key")) }
        return proof
    }

    /// `WWW-Authenticate` for a refusal at a resource: the `DPoP` challenge (with the algorithms accepted), and the
    /// `Bearer` one too when the request did not name a scheme (RFC 9449 §7.2).
    static func challenge(scheme: Scheme?, error: String?, description: String?) -> String {
        var dpop = "DPoP algs=\"\(Self.algorithms.joined(separator: " "))\""
        var bearer = "Bearer"
        if let error {
            let parameters = ", error=\"\(error)\"" + (description.map { ", error_description=\"\(Self.quotable($0))\"" } ?? "")
            if scheme == .bearer { bearer += parameters.dropFirst(1) } else { dpop += parameters }
        }
        switch scheme {
        case .bearer: return bearer
        case .dpop: return dpop
        case nil: return "\(bearer), \(dpop)"
        }
    }

    /// A description fit for a quoted-string (no quote or backslash).
    static func quotable(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != "\"" && $0 != "\\" && $0.value >= 0x20 && $0.value < 0x7F }.map(Character.init))
    }
}
