public import Foundation

/// Work a route promised before it answered (issue #44 item 1): a password-reset or sign-in-code mail after a 202, a
/// sign-in request's push after a 201. The route records it in its own transaction; a background worker on any
/// instance leases it, does it, and deletes it in the transaction of what it did. A process killed between the answer
/// and the work leaves the record, and the work happens after a restart (or on another instance), once.
public struct DeferredWorkRecord: Sendable, Hashable {
    public var id: String
    /// What to do (`password_reset`, `sign_in_code`, `sign_in_push`): the worker's handlers are keyed by it.
    public var kind: String
    /// What it is about: an address, a sign-in request's id. Never a secret.
    public var subject: String
    public var createdAt: Date
    /// Leases taken so far (the current one included, once claimed).
    public var attempts: Int

    public init(id: String, kind: String, subject: String, createdAt: Date, attempts: Int = 0) {
        self.id = id
        self.kind = kind
        self.subject = subject
        self.createdAt = createdAt
        self.attempts = attempts
    }
}

/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol DeferredWorkStore: Sendable {
    /// Records work to do (in the unit of work of the request that promises it).
    func insertDeferredWork(_ work: DeferredWorkRecord) async throws
    /// Leases up to `limit` records of `kinds` no one holds, oldest first, until `leaseUntil`, under `token`, counting
    /// the attempt. Only the kinds the caller can do: a record of another kind is left to a worker that can.
    func claimDeferredWork(now: Date, leaseUntil: Date, token: String, kinds: [String], limit: Int) async throws -> [DeferredWorkRecord]
    /// Deletes a record leased under `token` (in the unit of work that did it); false when the lease was lost (another
    /// worker took it after it ran out), and then the caller's unit must roll back.
    func finishDeferredWork(id: String, token: String) async throws -> Bool
    /// Keeps a record leased under `token` until `until` only (a failed attempt: tried again then, by any worker).
    func postponeDeferredWork(id: String, token: String, until: Date) async throws
    /// How many records wait, and since when the oldest.
    func deferredWorkBacklog() async throws -> (count: Int, oldest: Date?)
}
