public import Foundation

/// Verifies Touchstone access tokens: the signature with the issuer's key of the token's `kid` only, `typ: at+jwt`,
/// `iss`, `aud`, and `exp` / `nbf` / `iat` with a small leeway.
///
/// ```swift
/// let verifier = AccessTokenVerifier(
///     keys: JWKSCache(issuer: "https://auth.example.com"),
///     issuer: "https://auth.example.com",
///     audiences: ["https://api.example.com"]
/// )
/// let claims = try await verifier.verify(token)
/// ```
public struct AccessTokenVerifier: Sendable {
    public let keys: any VerificationKeyProvider
    /// The `iss` tokens must carry.
    public let issuer: String
    /// `aud` must name at least one of these; `nil` skips the audience check (inspection only, never for an API).
    public let audiences: Set<String>?
    /// How far clocks may disagree, in seconds (default 30).
    public let leeway: TimeInterval
    let now: @Sendable () -> Date

    public init(
        keys: any VerificationKeyProvider,
        issuer: String,
        audiences: [String]?,
        leeway: TimeInterval = 30,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.keys = keys
        self.issuer = issuer
        self.audiences = audiences.map(Set.init)
        self.leeway = leeway
        self.now = now
    }

    /// The token's claims once everything checks out.
    ///
    /// - Throws: ``TokenVerificationError`` naming the first check that failed.
    public func verify(_ token: String) async throws(TokenVerificationError) -> AccessTokenClaims {
        let (_, claims, _) = try await SignedToken.verify(token, as: AccessTokenClaims.self, type: accessTokenType, keys: self.keys)
        try self.check(claims)
        return claims
    }

    /// The claim checks alone (the signature already verified).
    public func check(_ claims: AccessTokenClaims) throws(TokenVerificationError) {
        guard claims.issuer == self.issuer else {
            throw TokenVerificationError(.wrongIssuer, "iss '\(claims.issuer)' is not '\(self.issuer)'")
        }
        if let audiences = self.audiences, !claims.audience.contains(where: audiences.contains) {
            throw TokenVerificationError(.wrongAudience, "aud \(claims.audience) names none of \(audiences.sorted())")
        }
        let now = self.now().timeIntervalSince1970
        guard TimeInterval(claims.expiresAt) + self.leeway > now else {
            throw TokenVerificationError(.expired, "the token expired at \(claims.expiresAt)")
        }
        if let notBefore = claims.notBefore, TimeInterval(notBefore) - self.leeway > now {
            throw TokenVerificationError(.notYetValid, "the token is not valid before \(notBefore)")
        }
        guard TimeInterval(claims.issuedAt) - self.leeway <= now else {
            throw TokenVerificationError(.notYetValid, "the token was issued in the future (\(claims.issuedAt))")
        }
        guard !claims.subject.isEmpty else { throw TokenVerificationError(.malformed, "the token has an empty sub") }
    }
}
