public import Foundation

/// The mail queue (issue #33): mails are written in the transaction of the change that causes them, sent after it
/// commits, retried with backoff, and survive restarts. A sender leases due mails (a sender that dies leaves them to
/// another when the lease runs out).
public protocol MailQueueStore: Sendable {
    /// Queues a mail (in a unit of work, with the change that causes it).
    func enqueueMail(_ mail: QueuedMailRecord) async throws
    /// Leases up to `limit` pending mails due at `now`, oldest first, until `leaseUntil`, under `token`.
    func claimDueMail(now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [QueuedMailRecord]
    /// Records an attempt of a mail leased under `token`: deletes it when sent, reschedules or fails it otherwise;
    /// false (nothing changed) when the lease was lost.
    func finishMailAttempt(id: String, token: String, outcome: MailAttemptOutcome) async throws -> Bool
    /// How many mails wait or failed, and since when the oldest waits.
    func mailQueueStatistics() async throws -> MailQueueStatistics
    /// Deletes failed mails created before `cutoff`; returns how many.
    func purgeFailedMail(before cutoff: Date) async throws -> Int
}
