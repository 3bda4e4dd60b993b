public import Foundation
import SQLKit
import TouchstoneCrypto

// Challenges of device-key enrolment and sign-in: issued, answered and consumed once.
extension SQLTouchstoneStore {
    public func insertChallenge(_ challenge: ChallengeRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at, consumed_at)
                VALUES (\(bind: challenge.challenge), \(bind: challenge.registrationId),
                    \(bind: challenge.purpose.rawValue), \(bind: challenge.createdAt.millis),
                    \(bind: challenge.expiresAt.millis), \(bind: challenge.consumedAt?.millis))
                """
            ).run()
        }
    }

    public func recordAnsweredChallenge(_ challenge: ChallengeRecord, at: Date) async throws -> Bool {
        // One statement: of several attempts with one value, exactly one records it.
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at, consumed_at)
                SELECT \(bind: challenge.challenge), id, \(bind: challenge.purpose.rawValue), \(bind: challenge.createdAt.millis),
                    \(bind: challenge.expiresAt.millis), \(bind: at.millis)
                FROM registrations WHERE id = \(bind: challenge.registrationId)
                ON CONFLICT (challenge) DO NOTHING
                RETURNING challenge
                """
            ).first() != nil
        }
    }

    public func consumeLatestChallenge(
        registrationId: String,
        purpose: ChallengePurpose,
        at: Date
    ) async throws -> ChallengeRecord? {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE challenges SET consumed_at = \(bind: at.millis)
                WHERE challenge = (
                    SELECT challenge FROM challenges
                    WHERE registration_id = \(bind: registrationId) AND purpose = \(bind: purpose.rawValue)
                        AND consumed_at IS NULL
                    ORDER BY created_at DESC LIMIT 1
                ) AND consumed_at IS NULL
                RETURNING challenge, registration_id, purpose, created_at, expires_at
                """
            ).first().map(ChallengeRecord.init(row:))
        }
    }
}
