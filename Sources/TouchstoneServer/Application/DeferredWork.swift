import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TouchstoneCrypto
import TouchstoneStore

/// Work a route promises before it answers (issue #44 item 1): `POST /v1/password-resets` and `POST /v1/email-codes`
/// (a 202, then a mail for a known address) and `POST /v1/sign-in-requests` (a 201, then a push to the phones).
///
/// The route records the work in its own transaction (``record(_:subject:in:)``), so the answer never promises what
/// a crash could lose. ``DeferredWorkService`` leases due records on any instance, hands each to the handler a feature
/// registered for its kind, and the handler deletes the record in the transaction of what it did
/// (``DeferredLease/finish(in:)``), so a record is done once: a worker that dies leaves its lease to run out, and
/// another worker takes it. A failed attempt is tried again after ``retryDelays``; a record that keeps failing is
/// given up after ``maximumAttempts`` leases, logged.
final class DeferredWork: Sendable {
    typealias Handler = @Sendable (DeferredLease) async throws -> Void

    let store: any TouchstoneStore
    let logger: Logger
    let now: @Sendable () -> Date
    let randomBytes: @Sendable (Int) -> [UInt8]
    let signal = WakeSignal()
    private let handlers = NIOLockedValueBox<[String: Handler]>([:])

    /// How long a worker holds a record before another may take it.
    static let leaseDuration: TimeInterval = 60
    static let maximumAttempts = 8
    /// Waits after the 1st, 2nd... failed attempt (about three minutes in all, before the 8th and last).
    static let retryDelays: [TimeInterval] = [2, 5, 10, 20, 30, 45, 60]

    init(store: any TouchstoneStore, logger: Logger, now: @escaping @Sendable () -> Date, randomBytes: @escaping @Sendable (Int) -> [UInt8]) {
        self.store = store
        self.logger = logger
        self.now = now
        self.randomBytes = randomBytes
    }

    /// Sets the handler of a kind of work (a feature, while the application is built).
    func register(_ kind: String, _ handler: @escaping Handler) {
        self.handlers.withLockedValue { $0[kind] = handler }
    }

    /// Records work in `tx`: the unit of work of the request that promises it, or the store itself when the record is
    /// all the request writes. Call ``committed()`` after the commit.
    func record(_ kind: String, subject: String, in tx: any TouchstoneStore) async throws {
        try await tx.insertDeferredWork(DeferredWorkRecord(id: Base64.urlEncode(self.randomBytes(16)), kind: kind, subject: subject, createdAt: self.now()))
    }

    /// Wakes this instance's worker (the record is committed).
    func committed() {
        self.signal.wake()
    }

    /// Does every record due now, one after another; returns how many were handed to a handler.
    ///
    /// Each record is taken just before it is done, so its lease covers that one run (taken sixteen at a time, the
    /// last waited under the first one's lease behind the others' pushes, and with Apple slow to answer another
    /// instance could take it and push it too).
    @discardableResult
    func runDue() async throws -> Int {
        // Only the kinds this instance can do: leasing another (push not configured here) would hold it from an
        // instance that can for a lease, and count an attempt against it each time.
        let handlers = self.handlers.withLockedValue { $0 }
        let kinds = handlers.keys.sorted()
        var handled = 0
        while true {
            let token = Base64.urlEncode(self.randomBytes(16))
            let now = self.now()
            let leased = try await self.store.claimDeferredWork(
                now: now, leaseUntil: now.addingTimeInterval(Self.leaseDuration), token: token, kinds: kinds, limit: 1)
            guard let work = leased.first, let handler = handlers[work.kind] else { return handled }
            guard work.attempts <= Self.maximumAttempts else {
                self.logger.error("deferred work: \(work.kind) \(work.id) given up after \(work.attempts - 1) attempts")
                _ = try await self.store.finishDeferredWork(id: work.id, token: token)
                continue
            }
            do {
                try await handler(DeferredLease(work: work, token: token))
                handled += 1
            } catch {
                // Tried again after a backoff, here or on another instance (if even the postponement fails, when the
                // lease runs out).
                self.logger.warning("deferred work: \(work.kind) \(work.id) attempt \(work.attempts) failed: \(error)")
                let delay = Self.retryDelays[min(work.attempts, Self.retryDelays.count) - 1]
                try? await self.store.postponeDeferredWork(id: work.id, token: token, until: self.now().addingTimeInterval(delay))
            }
        }
    }
}

/// A leased record, for its handler.
struct DeferredLease: Sendable {
    let work: DeferredWorkRecord
    let token: String

    struct Lost: Error {}

    /// Deletes the record in `tx`, the unit of work that did it (or the store, when the deletion is all there is to
    /// write); throws (rolling the unit back) when the lease was lost to another worker, which then does the work.
    func finish(in tx: any TouchstoneStore) async throws {
        guard try await tx.finishDeferredWork(id: self.work.id, token: self.token) else { throw Lost() }
    }
}

/// Runs the worker while the server runs: after every wake and at least every second (work recorded by another
/// instance, or left by a worker that died). On SIGTERM it finishes the record in hand and stops; the service group
/// cancels it after `TOUCHSTONE_SHUTDOWN_GRACE_SECONDS`, and a record cut short is done after the restart.
struct DeferredWorkService: Service {
    let work: DeferredWork

    func run() async throws {
        await self.work.signal.loopUntilShutdown(every: .seconds(1)) {
            do {
                try await self.work.runDue()
            } catch {
                self.work.logger.warning("deferred work: the records could not be read: \(error)")
            }
        }
    }
}
