import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneStore
import TouchstoneTesting

@testable import TouchstoneServer

/// The mail queue's leases with two senders (two instances on one database): a mail is sent once when the SMTP server
/// is slow, as long as one attempt fits in the lease.
struct MailLeaseTests {
    /// An SMTP server that takes 100 s (on the test's clock) to accept a mail; during the second delivery it is
    /// given, 90 s in, another instance's sender runs.
    final class SlowServer: MailTransport, Sendable {
        let clock: ManualClock
        private let state = NIOLockedValueBox<(delivered: [String], meanwhile: (@Sendable () async throws -> Void)?)>(([], nil))

        init(clock: ManualClock) { self.clock = clock }

        var delivered: [String] { self.state.withLockedValue { $0.delivered } }

        func meanwhile(_ action: @escaping @Sendable () async throws -> Void) {
            self.state.withLockedValue { $0.meanwhile = action }
        }

        func deliver(_ mail: OutgoingMail) async throws {
            self.clock.advance(by: 90)
            let action = self.state.withLockedValue { state -> (@Sendable () async throws -> Void)? in
                guard state.delivered.count == 1 else { return nil }
                defer { state.meanwhile = nil }
                return state.meanwhile
            }
            if let action { try await action() }
            self.clock.advance(by: 10)
            self.state.withLockedValue { $0.delivered.append(mail.id) }
        }
    }

    @Test func aMailWaitingBehindSlowAttemptsIsNotSentByTwoInstances() async throws {
        let clock = ManualClock()
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        let key = SymmetricKey(size: .bits256)
        var configuration = TouchstoneConfiguration()
        configuration.mail.publicURL = "https://bank.example.com"
        var dependencies = TouchstoneDependencies.live
        dependencies.now = { clock.now }
        let mailer = try makeMailer(configuration, keyEncryptionKey: key, dependencies: dependencies)
        let server = SlowServer(clock: clock)
        // Two instances' senders, each holding what it takes for 180 s (the default lease).
        let senders = (0..<2).map { _ in
            MailDispatcher(
                store: store, keyEncryptionKey: key, transport: server, logger: Logger(label: "test"), metrics: nil,
                now: { clock.now }, randomBytes: dependencies.randomBytes, leaseDuration: 180)
        }
        let first = try mailer.prepare(.passwordChanged, to: "first@example.org", values: ["how": "changed"])
        try await store.enqueueMail(first)
        clock.advance(by: 1)
        let second = try mailer.prepare(.passwordChanged, to: "second@example.org", values: ["how": "changed"])
        try await store.enqueueMail(second)
        clock.advance(by: 1)
        // The second mail's attempt starts 100 s after the first sender began, and the other sender runs 190 s after:
        // taken with the first, the second mail's lease would have run out by then.
        let other = senders[1]
        server.meanwhile {
            let sent = try await other.sendDue()
            #expect(sent == 0, "the other sender took a mail this one holds")
        }
        #expect(try await senders[0].sendDue() == 2)
        #expect(server.delivered == [first.id, second.id])
        #expect(try await store.mailQueueStatistics().pending == 0)
    }
}
