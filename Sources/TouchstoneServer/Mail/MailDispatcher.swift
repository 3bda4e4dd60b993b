import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TouchstoneCrypto
import TouchstoneMail
import TouchstoneStore

/// Sends the mail queue (issue #33): leases due mails (``leaseDuration``, `TOUCHSTONE_MAIL_LEASE_SECONDS`, so that a sender that dies leaves them to
/// another instance), opens each, hands it to the transport, and deletes it once accepted. A failure is tried again
/// after ``retryDelays`` (about a day and a half in all); a permanent refusal (a 5xx to the recipient or the message)
/// or the end of the delays fails the mail, whose sealed message is then deleted. Nothing about a mail's content is
/// logged: its id, kind and the server's reply only.
final class MailDispatcher: Sendable {
    let store: any TouchstoneStore
    let keyEncryptionKey: SymmetricKey
    let transport: any MailTransport
    let logger: Logger
    let metrics: ServerMetrics?
    let now: @Sendable () -> Date
    let randomBytes: @Sendable (Int) -> [UInt8]
    let retention: TimeInterval
    /// How long the mails taken are held (`TOUCHSTONE_MAIL_LEASE_SECONDS`).
    let leaseDuration: TimeInterval
    private let lastPurge = NIOLockedValueBox<Date?>(nil)

    /// Waits after the 1st, 2nd... failed attempt: 30 s, 1, 5, 15 and 30 min, then 1, 2, 4, 8 and 12 h (28 h in all).
    static let retryDelays: [TimeInterval] = [30, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200]

    init(
        store: any TouchstoneStore,
        keyEncryptionKey: SymmetricKey,
        transport: any MailTransport,
        logger: Logger,
        metrics: ServerMetrics?,
        now: @escaping @Sendable () -> Date,
        randomBytes: @escaping @Sendable (Int) -> [UInt8],
        retention: TimeInterval = 30 * 86_400,
        leaseDuration: TimeInterval = 180
    ) {
        self.leaseDuration = leaseDuration
        self.store = store
        self.keyEncryptionKey = keyEncryptionKey
        self.transport = transport
        self.logger = logger
        self.metrics = metrics
        self.now = now
        self.randomBytes = randomBytes
        self.retention = retention
    }

    /// Sends every mail due now, one after another; returns how many attempts were made.
    ///
    /// Each mail is taken just before its attempt, so its lease covers that one attempt. (Taken sixteen at a time,
    /// the last of them waited behind the others' attempts under the first one's lease: with a slow SMTP server the
    /// lease ran out before its turn, another instance took and sent it, and this one sent it again.)
    @discardableResult
    func sendDue() async throws -> Int {
        var attempts = 0
        while true {
            let token = Base64.urlEncode(self.randomBytes(16))
            let now = self.now()
            let mails = try await self.store.claimDueMail(now: now, leaseUntil: now.addingTimeInterval(self.leaseDuration), token: token, limit: 1)
            guard let mail = mails.first else { break }
            try await self.attempt(mail, token: token)
            attempts += 1
        }
        try await self.purgeIfDue()
        return attempts
    }

    private func attempt(_ mail: QueuedMailRecord, token: String) async throws {
        let outcome: MailAttemptOutcome
        let sealed: Mailer.Sealed
        do {
            sealed = try Mailer.open(mail, keyEncryptionKey: self.keyEncryptionKey)
        } catch {
            // Not openable under this key: no later attempt can do better.
            self.logger.error("mail: \(mail.id) (\(mail.kind)) cannot be opened with the key-encryption key; given up")
            _ = try await self.store.finishMailAttempt(id: mail.id, token: token, outcome: .failed(error: "cannot be opened with the key-encryption key"))
            self.metrics?.mailAttempt(outcome: "failed")
            return
        }
        let outgoing = OutgoingMail(id: mail.id, kind: mail.kind, from: sealed.from, to: sealed.to, data: sealed.data, createdAt: mail.createdAt)
        do {
            try await self.transport.deliver(outgoing)
            outcome = .sent
            self.logger.info("mail: \(mail.id) (\(mail.kind)) sent")
        } catch {
            outcome = self.outcome(after: error, attempts: mail.attempts + 1)
            switch outcome {
            case .failed(let reason): self.logger.error("mail: \(mail.id) (\(mail.kind)) given up after \(mail.attempts + 1) attempts: \(reason)")
            default: self.logger.warning("mail: \(mail.id) (\(mail.kind)) attempt \(mail.attempts + 1) failed, will retry: \(Self.reason(error))")
            }
        }
        if try await self.store.finishMailAttempt(id: mail.id, token: token, outcome: outcome) {
            switch outcome {
            case .sent: self.metrics?.mailAttempt(outcome: "sent")
            case .retry: self.metrics?.mailAttempt(outcome: "retrying")
            case .failed: self.metrics?.mailAttempt(outcome: "failed")
            }
        }
    }

    /// What follows a failed attempt (the `attempts`-th).
    func outcome(after error: any Error, attempts: Int) -> MailAttemptOutcome {
        let reason = Self.reason(error)
        if let error = error as? SMTPError, error.isPermanent { return .failed(error: reason) }
        guard attempts <= Self.retryDelays.count else { return .failed(error: reason) }
        return .retry(at: self.now().addingTimeInterval(Self.retryDelays[attempts - 1]), error: reason)
    }

    /// An error in a few hundred characters, for the queue's row and the log.
    static func reason(_ error: any Error) -> String {
        String(String(describing: error).prefix(300))
    }

    private func purgeIfDue() async throws {
        let now = self.now()
        let due = self.lastPurge.withLockedValue { last -> Bool in
            guard last.map({ now.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            last = now
            return true
        }
        if due { _ = try await self.store.purgeFailedMail(before: now.addingTimeInterval(-self.retention)) }
    }
}

/// Runs the dispatcher while the server runs: after every wake (a commit that queued mail) and at least every
/// 2 seconds (mail due for a retry, or queued by another instance). On SIGTERM the mails in hand are finished (within
/// `TOUCHSTONE_SHUTDOWN_GRACE_SECONDS`, after which the service group cancels them: their leases run out and they are
/// sent after the restart).
struct MailDispatchService: Service {
    let dispatcher: MailDispatcher
    let signal: WakeSignal

    func run() async throws {
        await self.signal.loopUntilShutdown(every: .seconds(2)) {
            do {
                try await self.dispatcher.sendDue()
            } catch {
                self.dispatcher.logger.warning("mail: the queue could not be read: \(error)")
            }
        }
    }
}
