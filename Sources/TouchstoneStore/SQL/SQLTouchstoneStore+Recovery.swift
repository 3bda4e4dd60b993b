public import Foundation
import SQLKit
import TouchstoneCrypto

// Mailed codes and links, verified addresses and recovery codes (issue #33).
extension SQLTouchstoneStore {
    public func replaceEmailChallenge(_ challenge: EmailChallengeRecord) async throws {
        try await self.executor.withTransaction { db in
            try await db.raw(
                "DELETE FROM email_challenges WHERE user_id = \(bind: challenge.userId) AND purpose = \(bind: challenge.purpose.rawValue)"
            ).run()
            try await db.raw(
                """
                INSERT INTO email_challenges (user_id, purpose, email, code_hash, token_hash, attempts, created_at, expires_at)
                VALUES (\(bind: challenge.userId), \(bind: challenge.purpose.rawValue), \(bind: challenge.email), \(bind: challenge.codeHash),
                    \(bind: challenge.tokenHash), \(bind: Int64(challenge.attempts)), \(bind: challenge.createdAt.millis), \(bind: challenge.expiresAt.millis))
                """
            ).run()
        }
    }

    public func emailChallenge(userId: String, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM email_challenges WHERE user_id = \(bind: userId) AND purpose = \(bind: purpose.rawValue)"
            ).first().map(EmailChallengeRecord.init(row:))
        }
    }

    public func emailChallenge(tokenHash: String) async throws -> EmailChallengeRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM email_challenges WHERE token_hash = \(bind: tokenHash)").first().map(EmailChallengeRecord.init(row:))
        }
    }

    public func consumeEmailChallenge(userId: String, purpose: EmailChallengePurpose, codeHash: String, at: Date) async throws -> EmailChallengeRecord? {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                DELETE FROM email_challenges
                WHERE user_id = \(bind: userId) AND purpose = \(bind: purpose.rawValue) AND code_hash = \(bind: codeHash)
                    AND expires_at > \(bind: at.millis)
                RETURNING *
                """
            ).first().map(EmailChallengeRecord.init(row:))
        }
    }

    public func recordEmailChallengeFailure(userId: String, purpose: EmailChallengePurpose, codeHash: String, limit: Int) async throws -> Int? {
        try await self.executor.withTransaction { db in
            guard
                let attempts = try await db.raw(
                    """
                    UPDATE email_challenges SET attempts = attempts + 1
                    WHERE user_id = \(bind: userId) AND purpose = \(bind: purpose.rawValue) AND code_hash = \(bind: codeHash)
                    RETURNING attempts
                    """
                ).first()?.decode(column: "attempts", as: Int64.self)
            else {
                return nil
            }
            if attempts >= Int64(limit) {
                try await db.raw(
                    "DELETE FROM email_challenges WHERE user_id = \(bind: userId) AND purpose = \(bind: purpose.rawValue) AND code_hash = \(bind: codeHash)"
                ).run()
            }
            return Int(attempts)
        }
    }

    public func deleteEmailChallenge(userId: String, purpose: EmailChallengePurpose) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM email_challenges WHERE user_id = \(bind: userId) AND purpose = \(bind: purpose.rawValue)").run()
        }
    }

    public func markEmailVerified(userId: String, email: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE users SET email_verified_at = COALESCE(email_verified_at, \(bind: at.millis))
                WHERE id = \(bind: userId) AND email = \(bind: email) RETURNING id
                """
            ).first() != nil
        }
    }

    public func changeEmail(userId: String, to email: String, at: Date) async throws -> Bool {
        do {
            return try await self.executor.withDatabase { db in
                try await db.raw(
                    "UPDATE users SET email = \(bind: email), email_verified_at = \(bind: at.millis) WHERE id = \(bind: userId) RETURNING id"
                ).first() != nil
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("email already registered")
        }
    }

    public func replaceRecoveryCodes(userId: String, codeHashes: [String], at: Date) async throws {
        try await self.executor.withTransaction { db in
            try await db.raw("DELETE FROM recovery_codes WHERE user_id = \(bind: userId)").run()
            for hash in Set(codeHashes) {
                try await db.raw(
                    "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (\(bind: userId), \(bind: hash), \(bind: at.millis))"
                ).run()
            }
        }
    }

    public func useRecoveryCode(userId: String, codeHash: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE recovery_codes SET used_at = \(bind: at.millis)
                WHERE user_id = \(bind: userId) AND code_hash = \(bind: codeHash) AND used_at IS NULL
                RETURNING code_hash
                """
            ).first() != nil
        }
    }

    public func unusedRecoveryCodeCount(userId: String) async throws -> Int {
        try await self.executor.withReadOnlyDatabase { db in
            Int(
                try await db.raw("SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = \(bind: userId) AND used_at IS NULL")
                    .first()?.decode(column: "n", as: Int64.self) ?? 0
            )
        }
    }
}

// The mail queue.
extension SQLTouchstoneStore {
    public func enqueueMail(_ mail: QueuedMailRecord) async throws {
        try await self.executor.withDatabase { db in try await Self.enqueue(mail, into: db) }
    }

    static func enqueue(_ mail: QueuedMailRecord, into db: any SQLDatabase) async throws {
        try await db.raw(
            """
            INSERT INTO mail_queue (id, kind, sealed_message, created_at, state, attempts, next_attempt_at)
            VALUES (\(bind: mail.id), \(bind: mail.kind), \(bind: mail.sealedMessage.base64URL), \(bind: mail.createdAt.millis),
                \(bind: mail.state.rawValue), \(bind: Int64(mail.attempts)), \(bind: mail.nextAttemptAt?.millis))
            """
        ).run()
    }

    public func claimDueMail(now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [QueuedMailRecord] {
        // The outer conditions repeat the inner ones: on PostgreSQL a row another sender leased meanwhile is re-checked
        // after its lock is released, and skipped.
        let rows = try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE mail_queue SET claim_token = \(bind: token), claimed_until = \(bind: leaseUntil.millis)
                WHERE state = 'pending' AND next_attempt_at <= \(bind: now.millis)
                    AND (claimed_until IS NULL OR claimed_until <= \(bind: now.millis))
                    AND id IN (
                        SELECT id FROM mail_queue
                        WHERE state = 'pending' AND next_attempt_at <= \(bind: now.millis)
                            AND (claimed_until IS NULL OR claimed_until <= \(bind: now.millis))
                        ORDER BY created_at, id LIMIT \(bind: Int64(limit))
                    )
                RETURNING *
                """
            ).all()
        }
        return try rows.map(QueuedMailRecord.init(row:)).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func finishMailAttempt(id: String, token: String, outcome: MailAttemptOutcome) async throws -> Bool {
        try await self.executor.withDatabase { db in
            switch outcome {
            case .sent:
                return try await db.raw("DELETE FROM mail_queue WHERE id = \(bind: id) AND claim_token = \(bind: token) RETURNING id").first() != nil
            case .retry(let at, let error):
                return try await db.raw(
                    """
                    UPDATE mail_queue SET attempts = attempts + 1, next_attempt_at = \(bind: at.millis), last_error = \(bind: error),
                        claim_token = NULL, claimed_until = NULL
                    WHERE id = \(bind: id) AND claim_token = \(bind: token) RETURNING id
                    """
                ).first() != nil
            case .failed(let error):
                return try await db.raw(
                    """
                    UPDATE mail_queue SET state = 'failed', attempts = attempts + 1, sealed_message = '', next_attempt_at = NULL,
                        last_error = \(bind: error), claim_token = NULL, claimed_until = NULL
                    WHERE id = \(bind: id) AND claim_token = \(bind: token) RETURNING id
                    """
                ).first() != nil
            }
        }
    }

    public func mailQueueStatistics() async throws -> MailQueueStatistics {
        try await self.executor.withReadOnlyDatabase { db in
            let row = try await db.raw(
                """
                SELECT SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END) AS pending,
                    SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) AS failed,
                    MIN(CASE WHEN state = 'pending' THEN created_at END) AS oldest
                FROM mail_queue
                """
            ).first()
            return MailQueueStatistics(
                pending: Int(try row?.decode(column: "pending", as: Int64?.self) ?? 0),
                failed: Int(try row?.decode(column: "failed", as: Int64?.self) ?? 0),
                oldestPendingAt: try row?.decode(column: "oldest", as: Int64?.self).map(Date.init(millis:))
            )
        }
    }

    public func purgeFailedMail(before cutoff: Date) async throws -> Int {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM mail_queue WHERE state = 'failed' AND created_at < \(bind: cutoff.millis) RETURNING id").all().count
        }
    }
}

extension EmailChallengeRecord {
    init(row: any SQLRow) throws {
        self.init(
            userId: try row.decode(column: "user_id", as: String.self),
            purpose: try row.enumValue("purpose", as: EmailChallengePurpose.self),
            email: try row.decode(column: "email", as: String.self),
            codeHash: try row.decode(column: "code_hash", as: String.self),
            tokenHash: try row.decode(column: "token_hash", as: String.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at")
        )
        self.attempts = Int(try row.decode(column: "attempts", as: Int64.self))
    }
}

extension QueuedMailRecord {
    init(row: any SQLRow) throws {
        let text = try row.decode(column: "sealed_message", as: String.self)
        guard let sealed = [UInt8](base64URL: text) else { throw StoreError.unavailable("stored mail is not base64url") }
        self.init(id: try row.decode(column: "id", as: String.self), kind: try row.decode(column: "kind", as: String.self), sealedMessage: sealed, createdAt: try row.date("created_at"))
        self.state = try row.enumValue("state", as: QueuedMailRecord.State.self)
        self.attempts = Int(try row.decode(column: "attempts", as: Int64.self))
        self.nextAttemptAt = try row.optionalDate("next_attempt_at")
        self.lastError = try row.decode(column: "last_error", as: String?.self)
    }
}
