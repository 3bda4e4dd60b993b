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
                    VALUES (\(bind: user.id), \(bind: user.email), \(bind: user.displayName), \(bind: user.passwordHash), \(bind: user.createdAt.millis))
                    """
                ).run()
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("email already registered")
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

    public func deleteUser(id: String) async throws -> Bool {
        // Every table that names the user deletes its rows with it (ON DELETE CASCADE).
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM users WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }
}
