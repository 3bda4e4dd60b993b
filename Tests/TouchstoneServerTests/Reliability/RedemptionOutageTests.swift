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
    /// Users by id, failing while `down` is set (the rest of the store answers).
    final class FlakyUsers: UserStore, @unchecked Sendable {
        let inner: any TouchstoneStore
        let down = NIOLockedValueBox(false)
        init(_ inner: any TouchstoneStore) { self.inner = inner }
        func insertUser(_ user: UserRecord) async throws { try await self.inner.insertUser(user) }
        func user(id: String) async throws -> UserRecord? {
            if self.down.withLockedValue({ $0 }) { throw StoreError.unavailable("down") }
            return try await self.inner.user(id: id)
        }
        func user(email: String) async throws -> UserRecord? { try await self.inner.user(email: email) }
        func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool {
            try await self.inner.setRequireDeviceBoundPasskeys(userId: userId, required: required)
        }
        func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord] {
            try await self.inner.users(emailContaining: emailContaining, afterId: afterId, limit: limit)
        }
        func updatePassword(userId: String, passwordHash: String?) async throws -> Bool {
            try await self.inner.updatePassword(userId: userId, passwordHash: passwordHash)
        }
        func lockUser(id: String) async throws -> Bool { try await self.inner.lockUser(id: id) }
        func credentials(userId: String) async throws -> CredentialSummary { try await self.inner.credentials(userId: userId) }
        func deleteUser(id: String, at: Date) async throws -> Bool { try await self.inner.deleteUser(id: id, at: at) }
    }

    @Test func aPollThatFailsAfterSeeingTheApprovalLeavesTheSessionForTheNextPoll() async throws {
        let configuration = TestServer.configuration()
        guard case .sqliteFile(let path) = configuration.database else { preconditionFailure("needs a SQLite file") }
        let inner = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await inner.migrate()
        var store = ComposedStore(inner)
        let users = FlakyUsers(inner)
        store.users = users
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

            users.down.withLockedValue { $0 = true }
            let failed = try await flow.pollSignIn(requestId, pollToken)
            #expect(failed.status == .serviceUnavailable && failed.errorCode == "storage_unavailable")
            users.down.withLockedValue { $0 = false }
            let next = try await flow.pollSignIn(requestId, pollToken)
            #expect(next.value("status") == "approved")
            #expect(next.value("session", "token") != nil, "the approval's session was lost to the failed poll")
        }
    }
}
