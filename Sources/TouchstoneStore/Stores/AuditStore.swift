public import Foundation

/// The audit trail.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol AuditStore: Sendable {
    func insertAuditEvent(_ event: AuditEventRecord) async throws
    func auditEvents(_ query: AuditEventQuery) async throws -> [AuditEventRecord]

    /// Events of `types` at or after `since`, counted by time bucket (`bucket` long, aligned to the epoch), type,
    /// outcome and reason: what the admin console's charts draw.
    func auditEventCounts(since: Date, bucket: TimeInterval, types: [String]) async throws -> [AuditEventCount]

    /// Deletes the events that occurred before `cutoff` (the retention limit); returns how many.
    func deleteAuditEvents(before cutoff: Date) async throws -> Int
}
