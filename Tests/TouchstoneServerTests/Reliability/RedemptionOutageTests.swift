import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// Found by the chaos test (issue #44 item 8): the poll that sees an approval redeemed it, made the session, committed,
/// and then read the user for its answer; a database outage at that moment answered 503 after the commit, and the
/// approval's one session was made and never handed out. Now everything the answer needs is read first: the poll that
/// fails redeems nothing, and the next poll gets the session.
struct RedemptionOutageTests {
    @Test func aPollThatFailsAfterSeeingTheApprovalLeavesTheSessionForTheNextPoll() async throws {
        let configuration = TestServer.configuration()
        guard case .sqliteFile(let path) = configuration.database else { preconditionFailure("needs a SQLite file") }
        let inner = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await inner.migrate()
        var store = ComposedStore(inner)
        // Users by id fail while `down` is set (the rest of the store answers).
        let down = NIOLockedValueBox(false)
        store.users = InterceptedUsers(inner, byId: {
            if down.withLockedValue({ $0 }) { throw StoreError.unavailable("down") }
        })
        try await TestServer.run(configuration: configuration, store: store) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let created = try await flow.requestSignIn(["email": account.email])
            let requestId = try #require(created.value("requestId"))
            let pollToken = try #require(created.value("pollToken"))
            let number = try #require(created.any(["number"]) as? Int)
            let request = try #require(try await flow.pendingRequests(phone).first)
            let approved = try await flow.approve(requestId, phone, payload: try Flow.payload(request), choice: number)
            try #require(approved.status == .ok)

            down.withLockedValue { $0 = true }
            let failed = try await flow.pollSignIn(requestId, pollToken)
            #expect(failed.status == .serviceUnavailable && failed.errorCode == "storage_unavailable")
            down.withLockedValue { $0 = false }
            let next = try await flow.pollSignIn(requestId, pollToken)
            #expect(next.value("status") == "approved")
            #expect(next.value("session", "token") != nil, "the approval's session was lost to the failed poll")
        }
    }
}
