public import CoreMetrics
public import Foundation
public import Logging
public import SQLKit
import TouchstoneCrypto

/// ``TouchstoneStore`` written once in SQL that SQLite and PostgreSQL both run; the ``SQLExecutor`` supplies the
/// engine. All values are bound parameters.
public struct SQLTouchstoneStore: TouchstoneStore {
    let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    /// Opens a PostgreSQL store; connections are made on first use.
    ///
    /// - Parameter metrics: Where store operations are reported (``InstrumentedExecutor``); none when nil.
    public static func postgres(
        _ configuration: PostgresExecutor.Configuration,
        metrics: (any MetricsFactory)? = nil,
        logger: Logger
    ) throws -> SQLTouchstoneStore {
        let executor = try PostgresExecutor.open(configuration, logger: logger)
        return SQLTouchstoneStore(executor: metrics.map { InstrumentedExecutor(executor, engine: "postgres", factory: $0) } ?? executor)
    }

    /// Opens the embedded SQLite store at `location`.
    public static func sqlite(
        _ location: SQLiteExecutor.Location,
        commitBatch: Int = SQLiteExecutor.defaultCommitBatch,
        metrics: (any MetricsFactory)? = nil,
        logger: Logger
    ) async throws -> SQLTouchstoneStore {
        let executor = try await SQLiteExecutor.open(location, commitBatch: commitBatch, metrics: metrics, logger: logger)
        return SQLTouchstoneStore(executor: metrics.map { InstrumentedExecutor(executor, engine: "sqlite", factory: $0) } ?? executor)
    }

    public func migrate() async throws {
        let lock = self.executor.migrationLock
        try await self.executor.withTransaction { db in
            if let lock { try await db.raw(lock).run() }
            try await db.raw(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
            ).run()
            let applied = try await db.raw("SELECT version FROM schema_migrations").all()
                .map { try $0.decode(column: "version", as: Int.self) }
            let known = Set(Migrations.all.map(\.version))
            if let unknown = applied.first(where: { !known.contains($0) }) {
                throw StoreError.migrationFailed(
                    "the database has schema version \(unknown), which this build does not know; refusing to run an older build against a newer database"
                )
            }
            for migration in Migrations.all where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await db.raw(SQLQueryString(statement)).run()
                }
                try await db.raw(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: Date().millis))
                    """
                ).run()
            }
        }
    }

    public func checkHealth() async throws {
        do {
            try await self.executor.checkHealth()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unavailable("health check failed: \(error)")
        }
    }

    public func shutdown() async throws {
        try await self.executor.shutdown()
    }

    // MARK: Users

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

    // MARK: Sessions

    public func insertSession(_ session: SessionRecord) async throws {
        try await self.executor.withDatabase { db in try await Self.insert(session, into: db) }
    }

    /// `WITH` entries (each after a comma) inserting `session` and `events` once for each row of the entry `guard`
    /// (which has one row or none): the inserts of a sign-in that completes in one statement.
    static func sessionAndEvents(_ session: SessionRecord, _ events: [AuditEventRecord], ifRowIn guard: String) -> SQLQueryString {
        var sql: SQLQueryString = """
            , new_session AS (
                INSERT INTO sessions (\(unsafeRaw: SessionRecord.insertColumns))
                SELECT \(binds: session.insertValues) FROM \(unsafeRaw: `guard`)
            )
            """
        for (index, event) in events.enumerated() {
            sql += """
                , new_event_\(unsafeRaw: String(index)) AS (
                    INSERT INTO audit_events (\(unsafeRaw: AuditEventRecord.insertColumns))
                    SELECT \(binds: event.insertValues) FROM \(unsafeRaw: `guard`)
                )
                """
        }
        return sql
    }

    static func insert(_ session: SessionRecord, into db: any SQLDatabase) async throws {
        try await db.raw("INSERT INTO sessions (\(unsafeRaw: SessionRecord.insertColumns)) VALUES (\(binds: session.insertValues))").run()
    }

    public func session(tokenHash: String) async throws -> SessionRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.hot("SELECT \(unsafeRaw: SessionRecord.insertColumns) FROM sessions WHERE token_hash = \(bind: tokenHash)").first
                .map(SessionRecord.init(row:))
        }
    }

    public func updateSessionIdleExpiry(tokenHash: String, idleExpiresAt: Date) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                "UPDATE sessions SET idle_expires_at = \(bind: idleExpiresAt.millis) WHERE token_hash = \(bind: tokenHash)"
            ).run()
        }
    }

    public func revokeSession(tokenHash: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE sessions SET revoked_at = \(bind: at.millis)
                WHERE token_hash = \(bind: tokenHash) AND revoked_at IS NULL RETURNING token_hash
                """
            ).first() != nil
        }
    }

    // MARK: Registrations

    public func insertRegistration(_ registration: RegistrationRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO registrations (id, user_id, device_id, device_name, algorithm, public_key, key_fingerprint,
                    status, created_at, last_used_at, status_changed_at, app_attest_key_id, key_attestation_level,
                    key_attestation_package)
                VALUES (\(bind: registration.id), \(bind: registration.userId), \(bind: registration.deviceId),
                    \(bind: registration.deviceName), \(bind: registration.algorithm),
                    \(bind: registration.publicKey.base64URL), \(bind: registration.keyFingerprint),
                    \(bind: registration.status.rawValue), \(bind: registration.createdAt.millis),
                    \(bind: registration.lastUsedAt?.millis), \(bind: registration.statusChangedAt?.millis),
                    \(bind: registration.appAttestKeyId), \(bind: registration.keyAttestation?.securityLevel),
                    \(bind: registration.keyAttestation?.packageName))
                """
            ).run()
        }
    }

    public func registration(id: String) async throws -> RegistrationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM registrations WHERE id = \(bind: id)").first()
                .map(RegistrationRecord.init(row:))
        }
    }

    public func latestRegistration(keyFingerprint: String) async throws -> RegistrationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT * FROM registrations
                WHERE key_fingerprint = \(bind: keyFingerprint) AND status <> 'pending'
                ORDER BY created_at DESC, id DESC LIMIT 1
                """
            ).first().map(RegistrationRecord.init(row:))
        }
    }

    public func activeRegistration(deviceId: String) async throws -> RegistrationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM registrations WHERE device_id = \(bind: deviceId) AND status = 'active'"
            ).first().map(RegistrationRecord.init(row:))
        }
    }

    public func registrations(userId: String) async throws -> [RegistrationRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT * FROM registrations WHERE user_id = \(bind: userId) AND status <> 'pending'
                ORDER BY created_at DESC, id DESC
                """
            ).all().map(RegistrationRecord.init(row:))
        }
    }

    public func activateRegistration(id: String, replacing scope: ReplacementScope, at: Date) async throws -> [String] {
        do {
            return try await self.executor.withTransaction { db in
                guard
                    let row = try await db.raw(
                        "SELECT * FROM registrations WHERE id = \(bind: id) AND status = 'pending'"
                    ).first()
                else {
                    throw StoreError.notFound("registration \(id) is not pending")
                }
                let registration = try RegistrationRecord(row: row)
                if try await db.raw(
                    """
                    SELECT id FROM registrations
                    WHERE device_id = \(bind: registration.deviceId) AND status IN ('active', 'locked')
                        AND user_id <> \(bind: registration.userId)
                    """
                ).first() != nil {
                    throw StoreError.conflict("device is enrolled for another user")
                }
                let replaced: [any SQLRow]
                switch scope {
                case .sameDevice:
                    replaced = try await db.raw(
                        """
                        UPDATE registrations SET status = 'replaced', status_changed_at = \(bind: at.millis)
                        WHERE user_id = \(bind: registration.userId) AND device_id = \(bind: registration.deviceId)
                            AND status IN ('active', 'locked') AND id <> \(bind: id)
                        RETURNING id
                        """
                    ).all()
                case .allOfUser:
                    replaced = try await db.raw(
                        """
                        UPDATE registrations SET status = 'replaced', status_changed_at = \(bind: at.millis)
                        WHERE user_id = \(bind: registration.userId) AND status IN ('active', 'locked') AND id <> \(bind: id)
                        RETURNING id
                        """
                    ).all()
                }
                try await db.raw(
                    """
                    UPDATE registrations SET status = 'active', status_changed_at = \(bind: at.millis)
                    WHERE id = \(bind: id)
                    """
                ).run()
                return try replaced.map { try $0.decode(column: "id", as: String.self) }
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("device is enrolled for another user")
        }
    }

    public func updateRegistrationStatus(
        id: String,
        from: Set<RegistrationStatus>,
        to: RegistrationStatus,
        at: Date
    ) async throws -> Bool {
        let allowed = SQLList(from.sorted { $0.rawValue < $1.rawValue }.map { SQLBind($0.rawValue) })
        return try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET status = \(bind: to.rawValue), status_changed_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND status IN (\(allowed)) RETURNING id
                """
            ).first() != nil
        }
    }

    public func recordFailedSignature(registrationId: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            // One statement: concurrent failures each count, and exactly the one that reaches the threshold locks.
            try await db.raw(
                """
                UPDATE registrations SET failed_attempts = failed_attempts + 1,
                    status = CASE WHEN failed_attempts + 1 >= \(bind: threshold) THEN 'locked' ELSE status END,
                    status_changed_at = CASE WHEN failed_attempts + 1 >= \(bind: threshold) THEN \(bind: at.millis)
                        ELSE status_changed_at END
                WHERE id = \(bind: registrationId) AND status = 'active'
                RETURNING status
                """
            ).first()?.decode(column: "status", as: String.self) == RegistrationStatus.locked.rawValue
        }
    }

    public func unlockRegistration(id: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET status = 'active', failed_attempts = 0, status_changed_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND status = 'locked' RETURNING id
                """
            ).first() != nil
        }
    }

    // MARK: Challenges

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

    // MARK: Passkeys

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

    // MARK: App Attest

    public func insertAppAttestKey(_ key: AppAttestKeyRecord) async throws {
        do {
            try await self.executor.withDatabase { db in
                try await db.raw(
                    """
                    INSERT INTO app_attest_keys (key_id, public_key, app_id, environment, counter, receipt, created_at,
                        last_used_at)
                    VALUES (\(bind: key.keyId), \(bind: key.publicKey.base64URL), \(bind: key.appId), \(bind: key.environment),
                        \(bind: key.counter), \(bind: key.receipt.base64URL), \(bind: key.createdAt.millis),
                        \(bind: key.lastUsedAt?.millis))
                    """
                ).run()
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("App Attest key \(key.keyId) is already registered")
        }
    }

    public func appAttestKey(keyId: String) async throws -> AppAttestKeyRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM app_attest_keys WHERE key_id = \(bind: keyId)").first().map(AppAttestKeyRecord.init(row:))
        }
    }

    public func advanceAppAttestCounter(keyId: String, from previous: Int64, to counter: Int64, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE app_attest_keys SET counter = \(bind: counter), last_used_at = \(bind: at.millis)
                WHERE key_id = \(bind: keyId) AND counter = \(bind: previous) AND counter < \(bind: counter)
                RETURNING key_id
                """
            ).first() != nil
        }
    }

    // MARK: Housekeeping

    public func purgeExpired(before cutoff: Date) async throws -> PurgeResult {
        try await self.executor.withTransaction { db in
            let challenges = try await db.raw(
                "DELETE FROM challenges WHERE expires_at < \(bind: cutoff.millis) RETURNING challenge"
            ).all().count
            let webAuthnChallenges = try await db.raw(
                "DELETE FROM webauthn_challenges WHERE expires_at < \(bind: cutoff.millis) RETURNING challenge"
            ).all().count
            let sessions = try await db.raw(
                """
                DELETE FROM sessions
                WHERE expires_at < \(bind: cutoff.millis) OR idle_expires_at < \(bind: cutoff.millis)
                    OR revoked_at < \(bind: cutoff.millis)
                RETURNING token_hash
                """
            ).all().count
            // An enrolment is abandoned once none of its challenges can be answered any more.
            let pending = try await db.raw(
                """
                DELETE FROM registrations
                WHERE status = 'pending' AND created_at < \(bind: cutoff.millis) AND NOT EXISTS (
                    SELECT 1 FROM challenges
                    WHERE challenges.registration_id = registrations.id AND challenges.expires_at >= \(bind: cutoff.millis)
                )
                RETURNING id
                """
            ).all().count
            // Full buckets and stale failure counts carry no information any more.
            try await db.raw("DELETE FROM rate_limits WHERE tat < \(bind: cutoff.millis)").run()
            try await db.raw(
                "DELETE FROM login_failures WHERE last_failure_at < \(bind: cutoff.addingTimeInterval(-86_400).millis)"
            ).run()
            try await db.raw(
                """
                DELETE FROM address_failures
                WHERE last_failure_at < \(bind: cutoff.addingTimeInterval(-86_400).millis)
                    AND (blocked_until IS NULL OR blocked_until < \(bind: cutoff.millis))
                """
            ).run()
            return PurgeResult(challenges: challenges + webAuthnChallenges, sessions: sessions, pendingRegistrations: pending)
        }
    }
}

// MARK: - Row decoding

extension Date {
    /// The time as the store keeps it: whole milliseconds since 1970 (what a stored time compares as).
    public var millis: Int64 { Int64((self.timeIntervalSince1970 * 1000).rounded()) }
    public init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}

extension [UInt8] {
    var base64URL: String { Base64.urlEncode(self) }

    init?(base64URL text: String) {
        guard let bytes = Base64.urlDecodeCanonical(text) else { return nil }
        self = bytes
    }
}

extension SQLRow {
    func date(_ column: String) throws -> Date {
        Date(millis: try self.decode(column: column, as: Int64.self))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try self.decode(column: column, as: Int64?.self).map(Date.init(millis:))
    }

    func enumValue<E: RawRepresentable>(_ column: String, as type: E.Type) throws -> E
    where E.RawValue == String {
        let raw = try self.decode(column: column, as: String.self)
        guard let value = E(rawValue: raw) else {
            throw StoreError.unavailable("unexpected value \(raw) in column \(column)")
        }
        return value
    }
}

extension UserRecord {
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            email: try row.decode(column: "email", as: String.self),
            displayName: try row.decode(column: "display_name", as: String?.self),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            createdAt: try row.date("created_at")
        )
        self.requireDeviceBoundPasskeys = try row.decode(column: "require_device_bound_passkeys", as: Int64.self) != 0
    }
}

extension SessionRecord {
    /// The columns an insert names, in the order of ``insertValues`` (also every column ``init(row:)`` reads).
    static let insertColumns = """
        token_hash, user_id, created_at, expires_at, idle_expires_at, authenticated_at, password_authenticated_at, \
        methods, registration_id, revoked_at, id
        """

    var insertValues: [any Encodable & Sendable] {
        [
            self.tokenHash, self.userId, self.createdAt.millis, self.expiresAt.millis, self.idleExpiresAt.millis,
            self.authenticatedAt.millis, self.passwordAuthenticatedAt?.millis, self.methods.map(\.rawValue).joined(separator: ","),
            self.registrationId, self.revokedAt?.millis, self.id,
        ]
    }

    init(row: any SQLRow) throws {
        let methods = try row.decode(column: "methods", as: String.self).split(separator: ",")
            .compactMap { AuthenticationMethod(rawValue: String($0)) }
        self.init(
            tokenHash: try row.decode(column: "token_hash", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"),
            idleExpiresAt: try row.date("idle_expires_at"),
            authenticatedAt: try row.date("authenticated_at"),
            passwordAuthenticatedAt: try row.optionalDate("password_authenticated_at"),
            methods: methods,
            registrationId: try row.decode(column: "registration_id", as: String?.self),
            revokedAt: try row.optionalDate("revoked_at"),
            id: try row.decode(column: "id", as: String?.self)
        )
    }
}

extension AppAttestKeyRecord {
    init(row: any SQLRow) throws {
        guard let publicKey = [UInt8](base64URL: try row.decode(column: "public_key", as: String.self)),
            let receipt = [UInt8](base64URL: try row.decode(column: "receipt", as: String.self))
        else {
            throw StoreError.unavailable("stored App Attest key is not base64url")
        }
        self.init(
            keyId: try row.decode(column: "key_id", as: String.self),
            publicKey: publicKey,
            appId: try row.decode(column: "app_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            counter: try row.decode(column: "counter", as: Int64.self),
            receipt: receipt,
            createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at")
        )
    }
}

extension RegistrationRecord {
    init(row: any SQLRow) throws {
        let encodedKey = try row.decode(column: "public_key", as: String.self)
        guard let publicKey = [UInt8](base64URL: encodedKey) else {
            throw StoreError.unavailable("stored public key is not base64url")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            deviceId: try row.decode(column: "device_id", as: String.self),
            deviceName: try row.decode(column: "device_name", as: String?.self),
            algorithm: try row.decode(column: "algorithm", as: String.self),
            publicKey: publicKey,
            keyFingerprint: try row.decode(column: "key_fingerprint", as: String.self),
            status: try row.enumValue("status", as: RegistrationStatus.self),
            createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at"),
            statusChangedAt: try row.optionalDate("status_changed_at"),
            appAttestKeyId: try row.decode(column: "app_attest_key_id", as: String?.self)
        )
        self.failedAttempts = try row.decode(column: "failed_attempts", as: Int64.self)
        self.pinSetAt = try row.optionalDate("pin_set_at")
        self.pinDisabledAt = try row.optionalDate("pin_disabled_at")
        if let level = try row.decode(column: "key_attestation_level", as: String?.self),
            let package = try row.decode(column: "key_attestation_package", as: String?.self)
        {
            self.keyAttestation = KeyAttestationRecord(securityLevel: level, packageName: package)
        }
    }
}

extension PasskeyRecord {
    init(row: any SQLRow) throws {
        guard let publicKey = [UInt8](base64URL: try row.decode(column: "public_key", as: String.self)) else {
            throw StoreError.unavailable("stored passkey public key is not base64url")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            credentialId: try row.decode(column: "credential_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            name: try row.decode(column: "name", as: String?.self),
            publicKey: publicKey,
            algorithm: Int(try row.decode(column: "algorithm", as: Int64.self)),
            signCount: try row.decode(column: "sign_count", as: Int64.self),
            aaguid: try row.decode(column: "aaguid", as: String.self),
            backupEligible: try row.decode(column: "backup_eligible", as: Int64.self) != 0,
            backedUp: try row.decode(column: "backed_up", as: Int64.self) != 0,
            attestationFormat: try row.decode(column: "attestation_format", as: String.self),
            attestationType: try row.decode(column: "attestation_type", as: String.self),
            cloneWarnings: try row.decode(column: "clone_warnings", as: Int64.self),
            createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at")
        )
        self.failedAttempts = try row.decode(column: "failed_attempts", as: Int64.self)
        self.lockedAt = try row.optionalDate("locked_at")
        self.createdVia = try row.decode(column: "created_via", as: String.self)
        self.attestationKeyId = try row.decode(column: "attestation_key_id", as: String?.self)
    }
}

extension WebAuthnChallengeRecord {
    init(row: any SQLRow) throws {
        let allowed = try row.decode(column: "allow_credentials", as: String.self)
        self.init(
            challenge: try row.decode(column: "challenge", as: String.self),
            purpose: try row.enumValue("purpose", as: ChallengePurpose.self),
            userId: try row.decode(column: "user_id", as: String?.self),
            allowCredentials: allowed.isEmpty ? [] : allowed.split(separator: ",").map(String.init),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at")
        )
    }
}

extension ChallengeRecord {
    init(row: any SQLRow) throws {
        self.init(
            challenge: try row.decode(column: "challenge", as: String.self),
            registrationId: try row.decode(column: "registration_id", as: String.self),
            purpose: try row.enumValue("purpose", as: ChallengePurpose.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at")
        )
    }
}
