public import Foundation

/// The OpenID provider's authorizations: codes, token families with their refresh tokens, revoked access tokens,
/// users' consents to third-party clients, and the back-channel logouts owed when a session ends.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL. Codes
/// and refresh tokens are stored only as hashes.
public protocol AuthorizationStore: Sendable {
    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws
    /// Marks the code used at `at` unless it was used before; at most one caller ever gets `.redeemed`.
    func redeemAuthorizationCode(codeHash: String, at: Date) async throws -> AuthorizationCodeRedemption

    /// Stores a family. Throws ``StoreError/conflict(_:)`` when its id is taken (a replayed code's revoked placeholder).
    func insertTokenFamily(_ family: TokenFamilyRecord) async throws
    func tokenFamily(id: String) async throws -> TokenFamilyRecord?
    /// Revokes a family (its refresh tokens and access tokens); returns whether a live family was revoked.
    @discardableResult
    func revokeTokenFamily(id: String, at: Date) async throws -> Bool
    /// Revokes every live family of a user with a client (consent withdrawn); returns how many.
    func revokeTokenFamilies(userId: String, clientId: String, at: Date) async throws -> Int

    func insertRefreshToken(_ token: RefreshTokenRecord) async throws
    /// Marks the token used at `at`; at most one caller ever gets `.fresh` for a token.
    func useRefreshToken(tokenHash: String, at: Date) async throws -> RefreshTokenUse
    /// The refresh token with this hash, used or not.
    func refreshToken(tokenHash: String) async throws -> RefreshTokenRecord?

    /// Records an access token as revoked until `expiresAt` (when it would have expired anyway).
    func revokeAccessToken(jti: String, expiresAt: Date) async throws
    func isAccessTokenRevoked(jti: String) async throws -> Bool

    func consent(userId: String, clientId: String) async throws -> OAuthConsentRecord?
    /// Stores a consent, replacing the user's earlier one for the client.
    func upsertConsent(_ consent: OAuthConsentRecord) async throws
    /// The user's consents, newest first.
    func consents(userId: String) async throws -> [OAuthConsentRecord]
    /// Withdraws a consent; returns whether there was one.
    func deleteConsent(userId: String, clientId: String) async throws -> Bool

    /// The OpenID clients holding live tokens from each of `sessionIds` (their names, the most recent client first),
    /// for the user's list of sessions.
    func openIDClientNames(sessionIds: [String]) async throws -> [String: [String]]

    /// Back-channel logouts due at `now`: one per client and ended session, at most `limit`.
    func dueLogoutNotices(now: Date, limit: Int) async throws -> [LogoutNoticeRecord]
    /// Records the outcome of a back-channel logout for every family of the client and session: `delivered`, or
    /// another attempt at `retryAt` (nil: given up, with `error`).
    func recordLogoutNotice(clientId: String, sessionId: String, delivered: Bool, retryAt: Date?, error: String?) async throws
}
