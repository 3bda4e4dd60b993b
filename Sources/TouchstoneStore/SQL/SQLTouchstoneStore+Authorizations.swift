public import Foundation
import SQLKit

// The OpenID provider's codes, token families, refresh tokens, revoked access tokens, consents and back-channel
// logouts.
extension SQLTouchstoneStore {
    // MARK: Codes

    public func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO oauth_codes (code_hash, client_id, user_id, session_id, redirect_uri, code_challenge, nonce,
                    scope, auth_time, amr, acr, family_id, created_at, expires_at, dpop_jkt)
                VALUES (\(bind: code.codeHash), \(bind: code.clientId), \(bind: code.userId), \(bind: code.sessionId),
                    \(bind: code.redirectURI), \(bind: code.codeChallenge), \(bind: code.nonce), \(bind: code.scope),
                    \(bind: code.authTime.millis), \(bind: code.amr.joined(separator: " ")), \(bind: code.acr),
                    \(bind: code.familyId), \(bind: code.createdAt.millis), \(bind: code.expiresAt.millis), \(bind: code.dpopThumbprint))
                """
            ).run()
        }
    }

    public func redeemAuthorizationCode(codeHash: String, at: Date) async throws -> AuthorizationCodeRedemption {
        try await self.executor.withTransaction { db in
            if let row = try await db.raw(
                "UPDATE oauth_codes SET used_at = \(bind: at.millis) WHERE code_hash = \(bind: codeHash) AND used_at IS NULL RETURNING *"
            ).first() {
                return .redeemed(try AuthorizationCodeRecord(row: row))
            }
            guard let row = try await db.raw("SELECT * FROM oauth_codes WHERE code_hash = \(bind: codeHash)").first() else {
                return .unknown
            }
            return .replayed(try AuthorizationCodeRecord(row: row))
        }
    }

    // MARK: Token families

    public func insertTokenFamily(_ family: TokenFamilyRecord) async throws {
        do {
            try await self.insertTokenFamilyUnchecked(family)
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("token family id taken")
        }
    }

    private func insertTokenFamilyUnchecked(_ family: TokenFamilyRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO oauth_token_families (id, client_id, user_id, session_id, scope, auth_time, amr, acr,
                    created_at, revoked_at, session_ended_at, dpop_jkt)
                VALUES (\(bind: family.id), \(bind: family.clientId), \(bind: family.userId), \(bind: family.sessionId),
                    \(bind: family.scope), \(bind: family.authTime.millis), \(bind: family.amr.joined(separator: " ")),
                    \(bind: family.acr), \(bind: family.createdAt.millis), \(bind: family.revokedAt?.millis),
                    \(bind: family.sessionEndedAt?.millis), \(bind: family.dpopThumbprint))
                """
            ).run()
        }
    }

    public func tokenFamily(id: String) async throws -> TokenFamilyRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM oauth_token_families WHERE id = \(bind: id)").first().map(TokenFamilyRecord.init(row:))
        }
    }

    public func revokeTokenFamily(id: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "UPDATE oauth_token_families SET revoked_at = \(bind: at.millis) WHERE id = \(bind: id) AND revoked_at IS NULL RETURNING id"
            ).first() != nil
        }
    }

    public func revokeTokenFamilies(userId: String, clientId: String, at: Date) async throws -> Int {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE oauth_token_families SET revoked_at = \(bind: at.millis)
                WHERE user_id = \(bind: userId) AND client_id = \(bind: clientId) AND revoked_at IS NULL
                RETURNING id
                """
            ).all().count
        }
    }

    /// Marks the families of sessions that just ended: their tokens die, and a client with a back-channel logout URI
    /// is owed a logout token. Called in the transaction that ends the sessions.
    static func endTokenFamilies(sessionIds: [String], at: Date, in db: any SQLDatabase) async throws {
        guard !sessionIds.isEmpty else { return }
        try await db.raw(
            """
            UPDATE oauth_token_families SET session_ended_at = \(bind: at.millis),
                logout_state = CASE WHEN EXISTS (
                    SELECT 1 FROM oauth_clients c WHERE c.id = oauth_token_families.client_id AND c.backchannel_logout_uri IS NOT NULL
                ) THEN 'pending' ELSE NULL END,
                logout_next_at = \(bind: at.millis)
            WHERE session_id IN (\(binds: sessionIds)) AND session_ended_at IS NULL
            """
        ).run()
    }

    // MARK: Refresh tokens

    public func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO oauth_refresh_tokens (token_hash, family_id, scope, created_at, used_at)
                VALUES (\(bind: token.tokenHash), \(bind: token.familyId), \(bind: token.scope), \(bind: token.createdAt.millis),
                    \(bind: token.usedAt?.millis))
                """
            ).run()
        }
    }

    public func useRefreshToken(tokenHash: String, at: Date) async throws -> RefreshTokenUse {
        try await self.executor.withTransaction { db in
            if let row = try await db.raw(
                """
                UPDATE oauth_refresh_tokens SET used_at = \(bind: at.millis)
                WHERE token_hash = \(bind: tokenHash) AND used_at IS NULL RETURNING *
                """
            ).first() {
                return .fresh(try RefreshTokenRecord(row: row))
            }
            guard let row = try await db.raw("SELECT * FROM oauth_refresh_tokens WHERE token_hash = \(bind: tokenHash)").first() else {
                return .unknown
            }
            return .reused(try RefreshTokenRecord(row: row))
        }
    }

    public func refreshToken(tokenHash: String) async throws -> RefreshTokenRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM oauth_refresh_tokens WHERE token_hash = \(bind: tokenHash)").first()
                .map(RefreshTokenRecord.init(row:))
        }
    }

    // MARK: Revoked access tokens

    public func revokeAccessToken(jti: String, expiresAt: Date) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO oauth_revoked_access_tokens (jti, expires_at) VALUES (\(bind: jti), \(bind: expiresAt.millis))
                ON CONFLICT (jti) DO NOTHING
                """
            ).run()
        }
    }

    public func isAccessTokenRevoked(jti: String) async throws -> Bool {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT jti FROM oauth_revoked_access_tokens WHERE jti = \(bind: jti)").first() != nil
        }
    }

    // MARK: Consents

    public func consent(userId: String, clientId: String) async throws -> OAuthConsentRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM oauth_consents WHERE user_id = \(bind: userId) AND client_id = \(bind: clientId)"
            ).first().map(OAuthConsentRecord.init(row:))
        }
    }

    public func upsertConsent(_ consent: OAuthConsentRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO oauth_consents (user_id, client_id, scope, granted_at)
                VALUES (\(bind: consent.userId), \(bind: consent.clientId), \(bind: consent.scopes.joined(separator: " ")),
                    \(bind: consent.grantedAt.millis))
                ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at
                """
            ).run()
        }
    }

    public func consents(userId: String) async throws -> [OAuthConsentRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM oauth_consents WHERE user_id = \(bind: userId) ORDER BY granted_at DESC, client_id"
            ).all().map(OAuthConsentRecord.init(row:))
        }
    }

    public func deleteConsent(userId: String, clientId: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "DELETE FROM oauth_consents WHERE user_id = \(bind: userId) AND client_id = \(bind: clientId) RETURNING client_id"
            ).first() != nil
        }
    }

    // MARK: Back-channel logout

    public func openIDClientNames(sessionIds: [String]) async throws -> [String: [String]] {
        guard !sessionIds.isEmpty else { return [:] }
        return try await self.executor.withReadOnlyDatabase { db in
            let rows = try await db.raw(
                """
                SELECT f.session_id, c.name, MAX(f.created_at) AS latest
                FROM oauth_token_families f JOIN oauth_clients c ON c.id = f.client_id
                WHERE f.session_id IN (\(binds: sessionIds)) AND f.session_ended_at IS NULL AND f.revoked_at IS NULL
                GROUP BY f.session_id, c.name
                ORDER BY latest DESC
                """
            ).all()
            var names: [String: [String]] = [:]
            for row in rows {
                names[try row.decode(column: "session_id", as: String.self), default: []].append(try row.decode(column: "name", as: String.self))
            }
            return names
        }
    }

    public func dueLogoutNotices(now: Date, limit: Int) async throws -> [LogoutNoticeRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT client_id, session_id, user_id, uri, attempts FROM (
                    SELECT f.client_id, f.session_id, MIN(f.user_id) AS user_id, MIN(c.backchannel_logout_uri) AS uri,
                        MAX(f.logout_attempts) AS attempts, MIN(f.logout_next_at) AS next_at
                    FROM oauth_token_families f JOIN oauth_clients c ON c.id = f.client_id
                    WHERE f.logout_state = 'pending' AND f.logout_next_at <= \(bind: now.millis)
                        AND c.backchannel_logout_uri IS NOT NULL
                    GROUP BY f.client_id, f.session_id
                    UNION ALL
                    -- Logouts owed for the sessions of deleted accounts (their families are gone).
                    SELECT n.client_id, n.session_id, n.user_id, c.backchannel_logout_uri AS uri, n.attempts, n.next_at
                    FROM oauth_logout_notices n JOIN oauth_clients c ON c.id = n.client_id
                    WHERE n.state = 'pending' AND n.next_at <= \(bind: now.millis) AND c.backchannel_logout_uri IS NOT NULL
                ) due
                ORDER BY next_at
                LIMIT \(bind: max(1, limit))
                """
            ).all().map { row in
                LogoutNoticeRecord(
                    clientId: try row.decode(column: "client_id", as: String.self),
                    sessionId: try row.decode(column: "session_id", as: String.self),
                    userId: try row.decode(column: "user_id", as: String.self),
                    backchannelLogoutURI: try row.decode(column: "uri", as: String.self),
                    attempts: Int(try row.decode(column: "attempts", as: Int64.self))
                )
            }
        }
    }

    public func recordLogoutNotice(clientId: String, sessionId: String, delivered: Bool, retryAt: Date?, error: String?) async throws {
        let state = delivered ? "delivered" : (retryAt == nil ? "abandoned" : "pending")
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE oauth_token_families SET logout_state = \(bind: state),
                    logout_attempts = logout_attempts + \(bind: Int64(delivered ? 0 : 1)),
                    logout_next_at = \(bind: retryAt?.millis), logout_error = \(bind: error)
                WHERE client_id = \(bind: clientId) AND session_id = \(bind: sessionId) AND logout_state = 'pending'
                """
            ).run()
            try await db.raw(
                """
                UPDATE oauth_logout_notices SET state = \(bind: state), attempts = attempts + \(bind: Int64(delivered ? 0 : 1)),
                    next_at = \(bind: retryAt?.millis), error = \(bind: error)
                WHERE client_id = \(bind: clientId) AND session_id = \(bind: sessionId) AND state = 'pending'
                """
            ).run()
        }
    }
}

extension AuthorizationCodeRecord {
    init(row: any SQLRow) throws {
        self.init(
            codeHash: try row.decode(column: "code_hash", as: String.self),
            clientId: try row.decode(column: "client_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            sessionId: try row.decode(column: "session_id", as: String.self),
            redirectURI: try row.decode(column: "redirect_uri", as: String.self),
            codeChallenge: try row.decode(column: "code_challenge", as: String.self),
            nonce: try row.decode(column: "nonce", as: String?.self),
            scope: try row.decode(column: "scope", as: String.self),
            authTime: try row.date("auth_time"),
            amr: try row.decode(column: "amr", as: String.self).split(separator: " ").map(String.init),
            acr: try row.decode(column: "acr", as: String?.self),
            familyId: try row.decode(column: "family_id", as: String.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"),
            usedAt: try row.optionalDate("used_at")
        )
        self.dpopThumbprint = try row.decode(column: "dpop_jkt", as: String?.self)
    }
}

extension TokenFamilyRecord {
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            clientId: try row.decode(column: "client_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            sessionId: try row.decode(column: "session_id", as: String.self),
            scope: try row.decode(column: "scope", as: String.self),
            authTime: try row.date("auth_time"),
            amr: try row.decode(column: "amr", as: String.self).split(separator: " ").map(String.init),
            acr: try row.decode(column: "acr", as: String?.self),
            createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at"),
            sessionEndedAt: try row.optionalDate("session_ended_at")
        )
        self.dpopThumbprint = try row.decode(column: "dpop_jkt", as: String?.self)
    }
}

extension RefreshTokenRecord {
    init(row: any SQLRow) throws {
        self.init(
            tokenHash: try row.decode(column: "token_hash", as: String.self),
            familyId: try row.decode(column: "family_id", as: String.self),
            scope: try row.decode(column: "scope", as: String.self),
            createdAt: try row.date("created_at"),
            usedAt: try row.optionalDate("used_at")
        )
    }
}

extension OAuthConsentRecord {
    init(row: any SQLRow) throws {
        self.init(
            userId: try row.decode(column: "user_id", as: String.self),
            clientId: try row.decode(column: "client_id", as: String.self),
            scopes: try row.decode(column: "scope", as: String.self).split(separator: " ").map(String.init),
            grantedAt: try row.date("granted_at")
        )
    }
}
