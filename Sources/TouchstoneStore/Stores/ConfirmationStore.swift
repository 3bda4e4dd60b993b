public import Foundation

/// Transaction confirmations and their single decision.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol ConfirmationStore: Sendable {
    func insertConfirmation(_ confirmation: ConfirmationRecord) async throws
    func confirmation(id: String) async throws -> ConfirmationRecord?
    /// The user's confirmations, newest first, at most `limit` (the user's data export).
    func confirmations(userId: String, limit: Int) async throws -> [ConfirmationRecord]

    /// Approves (with `approval`) or declines (without) a pending confirmation that has not expired at `at`, storing
    /// `events` in the same transaction; returns `false` when it was not pending or had expired, so of concurrent
    /// decisions exactly one succeeds. An approval by a registration also resets its failed-signature count.
    func decideConfirmation(id: String, approval: ConfirmationRecord.Approval?, events: [AuditEventRecord], at: Date) async throws -> Bool
}
