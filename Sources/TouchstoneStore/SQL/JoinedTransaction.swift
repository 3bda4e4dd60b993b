public import SQLKit

/// The executor of a unit of work: every statement runs on the one database session of an open transaction, so the
/// aggregates' methods called on ``SQLTouchstoneStore/unitOfWork(_:)``'s store commit together or not at all.
///
/// A transaction asked for inside the unit joins it (there is no nesting): when any statement fails, the error leaves
/// the unit and the whole unit rolls back.
struct JoinedTransaction: SQLExecutor {
    /// The open transaction's session.
    let database: any SQLDatabase
    /// The executor that opened it: its engine's answers (uniqueness errors, `WITH` support).
    let engine: any SQLExecutor

    func withDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await body(self.database)
    }

    /// Reads inside a unit of work see its own writes: they run on its session.
    func withReadOnlyDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await body(self.database)
    }

    func withTransaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await body(self.database)
    }

    var migrationLock: SQLQueryString? { nil }
    func isUniqueViolation(_ error: any Error) -> Bool { self.engine.isUniqueViolation(error) }
    var hasDataModifyingWith: Bool { self.engine.hasDataModifyingWith }
    /// The unit does not own the connection: the executor that opened it closes it.
    func shutdown() async throws {}
    func checkHealth() async throws {}
}

extension SQLTouchstoneStore {
    public func unitOfWork<R: Sendable>(_ body: @Sendable (any TouchstoneStore) async throws -> R) async throws -> R {
        let engine = self.executor
        return try await engine.withTransaction { db in
            try await body(SQLTouchstoneStore(executor: JoinedTransaction(database: db, engine: engine)))
        }
    }
}
