import Foundation
import SQLKit

// Pending sign-ups without a password: one row each, removed when finished (or failed) and purged when expired.
extension SQLTouchstoneStore {
    public func insertPendingSignUp(_ signUp: PendingSignUpRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO pending_sign_ups (id, kind, user_id, email, display_name, details, created_at, expires_at)
                VALUES (\(bind: signUp.id), \(bind: signUp.kind.rawValue), \(bind: signUp.userId), \(bind: signUp.email),
                    \(bind: signUp.displayName), \(bind: signUp.details), \(bind: signUp.createdAt.millis), \(bind: signUp.expiresAt.millis))
                """
            ).run()
        }
    }

    public func consumePendingSignUp(id: String, kind: PendingSignUpRecord.Kind) async throws -> PendingSignUpRecord? {
        try await self.executor.withDatabase { db in
            guard let row = try await db.raw(
                "DELETE FROM pending_sign_ups WHERE id = \(bind: id) AND kind = \(bind: kind.rawValue) RETURNING *"
            ).first() else {
                return nil
            }
            return PendingSignUpRecord(
                id: try row.decode(column: "id", as: String.self),
                kind: kind,
                userId: try row.decode(column: "user_id", as: String.self),
                email: try row.decode(column: "email", as: String.self),
                displayName: try row.decode(column: "display_name", as: String?.self),
                details: try row.decode(column: "details", as: String?.self),
                createdAt: try row.date("created_at"),
                expiresAt: try row.date("expires_at")
            )
        }
    }
}
