public import CoreMetrics
public import Foundation
public import Logging
public import SQLKit
import TouchstoneCrypto

/// ``TouchstoneStore`` written once in SQL that SQLite and PostgreSQL both run; the ``SQLExecutor`` supplies the
/// engine. All values are bound parameters.
public struct SQLTouchstoneStore: TouchstoneStore {
    let executor: any SQLExecutor
    public let servesOneProcess: Bool

    /// - Parameter servesOneProcess: whether this process is the database's only server (``TouchstoneStore/servesOneProcess``).
    public init(executor: any SQLExecutor, servesOneProcess: Bool = false) {
        self.executor = executor
        self.servesOneProcess = servesOneProcess
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

    /// Opens the embedded SQLite store at `location`: one file serves one server (``TouchstoneStore/servesOneProcess``).
    public static func sqlite(
        _ location: SQLiteExecutor.Location,
        commitBatch: Int = SQLiteExecutor.defaultCommitBatch,
        metrics: (any MetricsFactory)? = nil,
        logger: Logger
    ) async throws -> SQLTouchstoneStore {
        let executor = try await SQLiteExecutor.open(location, commitBatch: commitBatch, metrics: metrics, logger: logger)
        return SQLTouchstoneStore(
            executor: metrics.map { InstrumentedExecutor(executor, engine: "sqlite", factory: $0) } ?? executor,
            servesOneProcess: true
        )
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
            // DPoP proofs too old to be accepted again anyway.
            try await db.raw("DELETE FROM dpop_proofs WHERE expires_at < \(bind: cutoff.millis)").run()
            // Sign-ups without a password that were never finished.
            try await db.raw("DELETE FROM pending_sign_ups WHERE expires_at < \(bind: cutoff.millis)").run()
            // Mailed codes and links that can no longer be used.
            try await db.raw("DELETE FROM email_challenges WHERE expires_at < \(bind: cutoff.millis)").run()
            // Sign-in requests a day after they ended (decided or not), and pauses that are over.
            try await db.raw("DELETE FROM sign_in_requests WHERE expires_at < \(bind: cutoff.addingTimeInterval(-86_400).millis)").run()
            try await db.raw("DELETE FROM phone_approval_pauses WHERE until < \(bind: cutoff.millis)").run()
            // The rows that serialise an address's requests, once it has none left (the next request makes it again).
            try await db.raw(
                """
                DELETE FROM serial_keys WHERE key LIKE 'sign_in_requests:%'
                    AND substr(key, 18) NOT IN (SELECT email FROM sign_in_requests WHERE email IS NOT NULL)
                """
            ).run()
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
            // The OpenID provider's records: a code is kept a day past its expiry (so that a late replay still
            // revokes what it gave), a revoked access token until it would have expired, a token family a day after
            // it died (its refresh tokens go with it), unless a back-channel logout is still owed for it.
            let dayBefore = cutoff.addingTimeInterval(-86_400).millis
            try await db.raw("DELETE FROM oauth_codes WHERE expires_at < \(bind: dayBefore)").run()
            try await db.raw("DELETE FROM oauth_revoked_access_tokens WHERE expires_at < \(bind: cutoff.millis)").run()
            try await db.raw(
                """
                DELETE FROM oauth_token_families
                WHERE (logout_state IS NULL OR logout_state <> 'pending') AND (
                    revoked_at < \(bind: dayBefore) OR session_ended_at < \(bind: dayBefore)
                    OR (created_at < \(bind: dayBefore) AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = oauth_token_families.session_id))
                )
                """
            ).run()
            // A deleted account's logout notices, a day after they were delivered or given up on.
            try await db.raw("DELETE FROM oauth_logout_notices WHERE state <> 'pending' AND created_at < \(bind: dayBefore)").run()
            return PurgeResult(challenges: challenges + webAuthnChallenges, sessions: sessions, pendingRegistrations: pending)
        }
    }
}
