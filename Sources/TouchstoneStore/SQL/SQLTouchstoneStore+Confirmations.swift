public import Foundation
import SQLKit

// Transaction confirmations: created pending, decided once (a conditional update), evidence kept with the approval.
extension SQLTouchstoneStore {
    public func insertConfirmation(_ confirmation: ConfirmationRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO confirmations (id, user_id, summary, details, payload, created_by, created_at, expires_at, status)
                VALUES (\(bind: confirmation.id), \(bind: confirmation.userId), \(bind: confirmation.summary),
                    \(bind: confirmation.details), \(bind: confirmation.payload), \(bind: confirmation.createdBy),
                    \(bind: confirmation.createdAt.millis), \(bind: confirmation.expiresAt.millis), \(bind: confirmation.status.rawValue))
                """
            ).run()
        }
    }

    public func confirmation(id: String) async throws -> ConfirmationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM confirmations WHERE id = \(bind: id)").first().map(ConfirmationRecord.init(row:))
        }
    }

    public func confirmations(userId: String, limit: Int) async throws -> [ConfirmationRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM confirmations WHERE user_id = \(bind: userId) ORDER BY created_at DESC, id LIMIT \(bind: max(1, limit))"
            ).all().map(ConfirmationRecord.init(row:))
        }
    }

    public func decideConfirmation(
        id: String,
        approval: ConfirmationRecord.Approval?,
        events: [AuditEventRecord],
        at: Date
    ) async throws -> Bool {
        try await self.executor.withTransaction { db in
            let status = approval == nil ? ConfirmationRecord.Status.declined : .approved
            let decided = try await db.raw(
                """
                UPDATE confirmations SET status = \(bind: status.rawValue), decided_at = \(bind: at.millis),
                    method = \(bind: approval?.method), registration_id = \(bind: approval?.registrationId),
                    passkey_id = \(bind: approval?.passkeyId), algorithm = \(bind: approval?.algorithm),
                    public_key = \(bind: approval?.publicKey), signature = \(bind: approval?.signature),
                    authenticator_data = \(bind: approval?.authenticatorData), client_data_json = \(bind: approval?.clientDataJSON)
                WHERE id = \(bind: id) AND status = \(bind: ConfirmationRecord.Status.pending.rawValue) AND expires_at > \(bind: at.millis)
                RETURNING id
                """
            ).first() != nil
            guard decided else { return false }
            if let registrationId = approval?.registrationId {
                try await db.raw(
                    "UPDATE registrations SET last_used_at = \(bind: at.millis), failed_attempts = 0 WHERE id = \(bind: registrationId)"
                ).run()
            }
            for event in events { try await Self.insert(event, into: db) }
            return true
        }
    }
}

extension ConfirmationRecord {
    init(row: any SQLRow) throws {
        let method = try row.decode(column: "method", as: String?.self)
        var approval: Approval?
        if let method, let algorithm = try row.decode(column: "algorithm", as: String?.self),
            let publicKey = try row.decode(column: "public_key", as: String?.self),
            let signature = try row.decode(column: "signature", as: String?.self)
        {
            approval = Approval(
                method: method,
                registrationId: try row.decode(column: "registration_id", as: String?.self),
                passkeyId: try row.decode(column: "passkey_id", as: String?.self),
                algorithm: algorithm,
                publicKey: publicKey,
                signature: signature,
                authenticatorData: try row.decode(column: "authenticator_data", as: String?.self),
                clientDataJSON: try row.decode(column: "client_data_json", as: String?.self)
            )
        }
        guard let status = Status(rawValue: try row.decode(column: "status", as: String.self)) else {
            throw StoreError.unavailable("a stored confirmation has an unknown status")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            summary: try row.decode(column: "summary", as: String.self),
            details: try row.decode(column: "details", as: String.self),
            payload: try row.decode(column: "payload", as: String.self),
            createdBy: try row.decode(column: "created_by", as: String.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"),
            status: status,
            decidedAt: try row.optionalDate("decided_at"),
            approval: approval
        )
    }
}
