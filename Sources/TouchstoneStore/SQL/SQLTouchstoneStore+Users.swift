public import Foundation
import SQLKit
import TouchstoneCrypto

// Users: created once (the email is unique), found by id or normalised email.
extension SQLTouchstoneStore {
    public func insertUser(_ user: UserRecord) async throws {
        do {
            try await self.executor.withDatabase { db in
                try await db.raw(
                    """
                    INSERT INTO users (id, email, display_name, password_hash, created_at)
                    VALUES (\(bind: user.id), \(bind: user.email), \(bind: user.displayName), \(bind: user.passwordHash ?? ""), \(bind: user.createdAt.millis))
                    """
                ).run()
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("email already registered")
        }
    }

    public func lockUser(id: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            // An update that changes nothing still takes the row's lock until the transaction ends (PostgreSQL); on
            // SQLite the transaction holds the writer's lock already.
            try await db.raw("UPDATE users SET password_hash = password_hash WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    public func credentials(userId: String) async throws -> CredentialSummary {
        try await self.executor.withDatabase { db in
            let password = try await db.raw("SELECT password_hash FROM users WHERE id = \(bind: userId)").first()
                .map { try $0.decode(column: "password_hash", as: String.self) } ?? ""
            let passkeys = try await db.raw("SELECT id FROM passkeys WHERE user_id = \(bind: userId) AND locked_at IS NULL").all()
                .map { try $0.decode(column: "id", as: String.self) }
            let registrations = try await db.raw("SELECT id FROM registrations WHERE user_id = \(bind: userId) AND status = 'active'").all()
                .map { try $0.decode(column: "id", as: String.self) }
            return CredentialSummary(hasPassword: !password.isEmpty, usablePasskeyIds: passkeys, activeRegistrationIds: registrations)
        }
    }

    public func user(id: String) async throws -> UserRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM users WHERE id = \(bind: id)").first().map(UserRecord.init(row:))
        }
    }

    public func user(email: String) async throws -> UserRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM users WHERE email = \(bind: email)").first().map(UserRecord.init(row:))
        }
    }

    public func deleteUser(id: String, at: Date) async throws -> Bool {
        try await self.executor.withTransaction { db in
            // The sessions end (their token families owe back-channel logouts), then the logouts owed are copied to
            // notices that survive the user: the families go with it.
            let ended = try await db.raw(
                "UPDATE sessions SET revoked_at = \(bind: at.millis) WHERE user_id = \(bind: id) AND revoked_at IS NULL RETURNING id"
            ).all()
            try await Self.endTokenFamilies(sessionIds: try ended.compactMap { try $0.decode(column: "id", as: String?.self) }, at: at, in: db)
            try await db.raw(
                """
                INSERT INTO oauth_logout_notices (client_id, session_id, user_id, state, attempts, next_at, created_at)
                SELECT client_id, session_id, MIN(user_id), 'pending', MAX(logout_attempts), MIN(logout_next_at), \(bind: at.millis)
                FROM oauth_token_families WHERE user_id = \(bind: id) AND logout_state = 'pending'
                GROUP BY client_id, session_id
                ON CONFLICT (client_id, session_id) DO NOTHING
                """
            ).run()
            // Every table that names the user deletes its rows with it (ON DELETE CASCADE).
            return try await db.raw("DELETE FROM users WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }
}
