public import SQLKit

/// Gives ``SQLTouchstoneStore`` database access with the right session semantics for one SQL engine.
///
/// The store's SQL is written once; an executor supplies the connection handling, the transaction statement and the
/// engine's way of reporting a uniqueness violation.
public protocol SQLExecutor: Sendable {
    /// Runs `body` with a database that executes single statements.
    func withDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Runs `body`, which only reads, with a database that executes single statements; it sees every write that was
    /// answered before it started. (An engine may run it on a connection of its own, in parallel with writes.)
    func withReadOnlyDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Runs `body` inside one write transaction, committed when it returns and rolled back when it throws.
    func withTransaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// A statement run first in the migration transaction so that instances starting together migrate one at a time
    /// (`nil` when the transaction itself is exclusive, as in SQLite).
    var migrationLock: SQLQueryString? { get }
    /// Whether `error` reports a violated UNIQUE constraint.
    func isUniqueViolation(_ error: any Error) -> Bool
    /// Whether a statement can change tables inside `WITH` (PostgreSQL can, SQLite cannot): a write of several
    /// statements can then be one statement, atomic by itself and one round trip to the database.
    var hasDataModifyingWith: Bool { get }
    /// Closes every connection.
    func shutdown() async throws
    /// Succeeds when the database can be used now; throws ``StoreError/unavailable(_:)`` otherwise. The default runs
    /// a trivial query; an engine that tracks reachability may answer from what it knows.
    func checkHealth() async throws
}

extension SQLExecutor {
    public var hasDataModifyingWith: Bool { false }

    public func checkHealth() async throws {
        try await self.withDatabase { db in _ = try await db.raw("SELECT 1 AS ok").first() }
    }

    /// By default reads share the connections of everything else.
    public func withReadOnlyDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await self.withDatabase(body)
    }

    /// Runs `body` between `begin` and `COMMIT` on one database session, rolling back when it throws.
    func transaction<R: Sendable>(
        on db: any SQLDatabase,
        begin: SQLQueryString,
        _ body: @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await db.raw(begin).run()
        do {
            let result = try await body(db)
            try await db.raw("COMMIT").run()
            return result
        } catch {
            try? await db.raw("ROLLBACK").run()
            throw error
        }
    }
}
