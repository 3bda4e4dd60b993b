import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import ServiceLifecycle
import Testing
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// Issue #44 item 1: what a route promises with its answer is recorded in the request's own transaction and done from
/// the record, so a process that dies between the answer and the work loses nothing: the work happens after the
/// restart, once. Three servers in turn on one SQLite file: one creates the account; one answers the password reset
/// and then never gets to the work (its address lookups hang, as a process about to be killed would) and is stopped;
/// one started later finds the record and sends the mail, once.
struct PromisedWorkTests {
    static func open(_ path: String) async throws -> SQLTouchstoneStore {
        let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await store.migrate()
        return store
    }

    @Test(.timeLimit(.minutes(2))) func aPasswordResetAnsweredBeforeACrashIsMailedAfterTheRestartOnce() async throws {
        // A file the servers share: outside the test process's directory, whose files each TestServer.run removes.
        let path = NSTemporaryDirectory() + "/touchstone-promised-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let configuration = TestServer.configuration { $0.database = .sqliteFile(path: path) }
        let email = "promised@example.com"
        let clock = ManualClock()
        try await TestServer.run(configuration: configuration, clock: clock, store: try await Self.open(path)) { client in
            let created = try await client.request(.post, "/v1/users", json: ["email": email, "password": Flow.password])
            try #require(created.status == .created)
        }
        // The server that answers and dies before the work.
        let first = TestMailbox()
        var stalled = ComposedStore(try await Self.open(path))
        // Its address lookups never answer until it stops, as if it were killed there: the work after the answer hangs.
        stalled.users = InterceptedUsers(stalled, byEmail: {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(3600)) }
            throw CancellationError()
        })
        try await TestServer.run(configuration: configuration, clock: clock, store: stalled, mailbox: first) { client in
            let answer = try await client.request(.post, "/v1/password-resets", json: ["email": email])
            #expect(answer.status == .accepted)
        }
        #expect(first.mails(to: email).filter { $0.kind == "password_reset" }.isEmpty)

        // After the restart (and after the dead worker's lease ran out), the mail goes, once.
        clock.advance(by: 120)
        let second = TestMailbox()
        let store = try await Self.open(path)
        try await TestServer.run(configuration: configuration, clock: clock, store: store, mailbox: second) { client in
            let mail = try await second.waitForMail(to: email, kind: "password_reset")
            #expect(mail.code != nil)
            let backlog = try await store.deferredWorkBacklog()
            #expect(backlog.count == 0)
            // A later pass of the worker finds nothing more to do: still one mail.
            clock.advance(by: 120)
            let code = try #require(mail.code)
            let reset = try await client.request(
                .post, "/v1/password-resets/confirm", json: ["email": email, "code": code, "newPassword": "a reset passphrase 9"])
            #expect(reset.status == .ok)
            #expect(second.mails(to: email).filter { $0.kind == "password_reset" }.count == 1)
        }
    }
}
