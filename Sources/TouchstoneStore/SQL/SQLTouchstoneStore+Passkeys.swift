public import Foundation
import SQLKit
import TouchstoneCrypto

// Passkeys and the WebAuthn challenges of their ceremonies.
extension SQLTouchstoneStore {
    public func insertPasskey(_ passkey: PasskeyRecord) async throws {
        do {
            try await self.executor.withDatabase { db in
                try await db.raw(
                    """
                    INSERT INTO passkeys (id, credential_id, user_id, name, public_key, algorithm, sign_count, aaguid,
                        backup_eligible, backed_up, attestation_format, attestation_type, clone_warnings, created_at,
                        last_used_at, created_via, attestation_key_id)
                    VALUES (\(bind: passkey.id), \(bind: passkey.credentialId), \(bind: passkey.userId), \(bind: passkey.name),
                        \(bind: passkey.publicKey.base64URL), \(bind: Int64(passkey.algorithm)), \(bind: passkey.signCount),
                        \(bind: passkey.aaguid), \(bind: Int64(passkey.backupEligible ? 1 : 0)),
                        \(bind: Int64(passkey.backedUp ? 1 : 0)), \(bind: passkey.attestationFormat),
                        \(bind: passkey.attestationType), \(bind: passkey.cloneWarnings), \(bind: passkey.createdAt.millis),
                        \(bind: passkey.lastUsedAt?.millis), \(bind: passkey.createdVia), \(bind: passkey.attestationKeyId))
                    """
                ).run()
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("credential already registered")
        }
    }

    public func passkey(id: String) async throws -> PasskeyRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM passkeys WHERE id = \(bind: id)").first().map(PasskeyRecord.init(row:))
        }
    }

    public func passkey(credentialId: String) async throws -> PasskeyRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM passkeys WHERE credential_id = \(bind: credentialId)").first()
                .map(PasskeyRecord.init(row:))
        }
    }

    public func passkeys(userId: String) async throws -> [PasskeyRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM passkeys WHERE user_id = \(bind: userId) ORDER BY created_at DESC, id DESC")
                .all().map(PasskeyRecord.init(row:))
        }
    }

    public func passkeys(aaguids: [String], attestationKeyIds: [String], limit: Int) async throws -> [PasskeyRecord] {
        guard !aaguids.isEmpty || !attestationKeyIds.isEmpty else { return [] }
        return try await self.executor.withReadOnlyDatabase { db in
            // A placeholder per value: the lists come from the metadata (a few hundred at most), never from a request.
            // An empty list is one value nothing matches.
            let aaguidValues: [any Encodable & Sendable] = aaguids.isEmpty ? [""] : aaguids
            let keyValues: [any Encodable & Sendable] = attestationKeyIds.isEmpty ? [""] : attestationKeyIds
            return try await db.raw(
                """
                SELECT * FROM passkeys WHERE aaguid IN (\(binds: aaguidValues)) OR attestation_key_id IN (\(binds: keyValues))
                ORDER BY created_at DESC, id DESC LIMIT \(bind: Int64(limit))
                """
            ).all().map(PasskeyRecord.init(row:))
        }
    }

    public func renamePasskey(id: String, userId: String, name: String?) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "UPDATE passkeys SET name = \(bind: name) WHERE id = \(bind: id) AND user_id = \(bind: userId) RETURNING id"
            ).first() != nil
        }
    }

    public func deletePasskey(id: String, userId: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM passkeys WHERE id = \(bind: id) AND user_id = \(bind: userId) RETURNING id")
                .first() != nil
        }
    }

    public func recordPasskeyUse(id: String, signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, at: Date) async throws {
        try await self.executor.withDatabase { db in
            try await Self.recordPasskeyUse(id: id, signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, at: at, in: db)
        }
    }

    private static func recordPasskeyUse(
        id: String,
        signCount: Int64,
        backupEligible: Bool,
        backedUp: Bool,
        cloneWarning: Bool,
        at: Date,
        in db: any SQLDatabase
    ) async throws {
        try await db.raw(
            "UPDATE passkeys SET \(Self.passkeyUse(signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, at: at)) WHERE id = \(bind: id)"
        ).run()
    }

    /// The assignments that record a passkey's use: the counter only grows, the backup flags are the latest (an
    /// authenticator may change BE; WebAuthn step 18 reports it and the service applies its policy).
    private static func passkeyUse(signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, at: Date) -> SQLQueryString {
        """
        sign_count = CASE WHEN sign_count < \(bind: signCount) THEN \(bind: signCount) ELSE sign_count END,
        backup_eligible = \(bind: Int64(backupEligible ? 1 : 0)),
        backed_up = \(bind: Int64(backedUp ? 1 : 0)),
        clone_warnings = clone_warnings + \(bind: Int64(cloneWarning ? 1 : 0)),
        last_used_at = \(bind: at.millis)
        """
    }

    public func recordFailedPasskeyAssertion(id: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE passkeys SET failed_attempts = failed_attempts + 1,
                    locked_at = CASE WHEN failed_attempts + 1 >= \(bind: threshold) THEN \(bind: at.millis) ELSE locked_at END
                WHERE id = \(bind: id) AND locked_at IS NULL
                RETURNING locked_at
                """
            ).first()?.decode(column: "locked_at", as: Int64?.self) != nil
        }
    }

    public func unlockPasskey(id: String, userId: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE passkeys SET locked_at = NULL, failed_attempts = 0
                WHERE id = \(bind: id) AND user_id = \(bind: userId) AND locked_at IS NOT NULL RETURNING id
                """
            ).first() != nil
        }
    }

    /// Inserts an answered passkey sign-in challenge, consumed at `at`, unless its value is stored; returns it if
    /// inserted.
    private static func recording(_ challenge: WebAuthnChallengeRecord, at: Date) -> SQLQueryString {
        """
        INSERT INTO webauthn_challenges (challenge, purpose, user_id, allow_credentials, created_at, expires_at, consumed_at)
        VALUES (\(bind: challenge.challenge), \(bind: challenge.purpose.rawValue), \(bind: challenge.userId),
            \(bind: challenge.allowCredentials.joined(separator: ",")), \(bind: challenge.createdAt.millis),
            \(bind: challenge.expiresAt.millis), \(bind: at.millis))
        ON CONFLICT (challenge) DO NOTHING
        RETURNING challenge
        """
    }

    public func recordAnsweredWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord, at: Date) async throws -> Bool {
        // One statement: of several attempts with one value, exactly one records it.
        try await self.executor.withDatabase { db in
            try await db.raw(Self.recording(challenge, at: at)).first() != nil
        }
    }

    public func completePasskeySignIn(
        challenge: WebAuthnChallengeRecord,
        passkeyId: String,
        signCount: Int64,
        backupEligible: Bool,
        backedUp: Bool,
        cloneWarning: Bool,
        session: SessionRecord,
        events: [AuditEventRecord],
        at: Date
    ) async throws -> Bool {
        if self.executor.hasDataModifyingWith {
            // One statement, as in completeSignIn.
            return try await self.executor.withDatabase { db in
                try await db.hot(
                    """
                    WITH answered AS (\(Self.recording(challenge, at: at))), used AS (
                        UPDATE passkeys
                        SET \(Self.passkeyUse(signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, at: at)), failed_attempts = 0
                        WHERE id = \(bind: passkeyId) AND EXISTS (SELECT 1 FROM answered)
                    )\(Self.sessionAndEvents(session, events, ifRowIn: "answered"))
                    SELECT challenge FROM answered
                    """
                ).first != nil
            }
        }
        return try await self.executor.withTransaction { db in
            let answered = try await db.hot(Self.recording(challenge, at: at)).first != nil
            guard answered else { return false }
            try await Self.recordPasskeyUse(id: passkeyId, signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, at: at, in: db)
            try await db.raw("UPDATE passkeys SET failed_attempts = 0 WHERE id = \(bind: passkeyId)").run()
            try await Self.insert(session, into: db)
            for event in events { try await Self.insert(event, into: db) }
            return true
        }
    }

    public func insertWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord) async throws {
        try await self.executor.withDatabase { db in
            _ = try await db.hot(
                """
                INSERT INTO webauthn_challenges (challenge, purpose, user_id, allow_credentials, created_at, expires_at)
                VALUES (\(bind: challenge.challenge), \(bind: challenge.purpose.rawValue), \(bind: challenge.userId),
                    \(bind: challenge.allowCredentials.joined(separator: ",")), \(bind: challenge.createdAt.millis),
                    \(bind: challenge.expiresAt.millis))
                """
            )
        }
    }

    public func consumeWebAuthnChallenge(_ challenge: String, purpose: ChallengePurpose, at: Date) async throws
        -> WebAuthnChallengeRecord?
    {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE webauthn_challenges SET consumed_at = \(bind: at.millis)
                WHERE challenge = \(bind: challenge) AND purpose = \(bind: purpose.rawValue) AND consumed_at IS NULL
                RETURNING challenge, purpose, user_id, allow_credentials, created_at, expires_at
                """
            ).first().map(WebAuthnChallengeRecord.init(row:))
        }
    }
}
