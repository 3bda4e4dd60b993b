import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import SQLKit
import Testing
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// Issue #44 item 2: one transaction per decision. A passkey's approval of a confirmation commits the approval, the
/// passkey's use (counter, backup flags, last use) and the events together, as a device key's approval does: when the
/// database refuses the passkey's part, nothing of the approval stays (the confirmation is still pending, no
/// `confirmation.approved` event, no webhook), and a later approval goes through whole.
struct ConfirmationAtomicityTests {
    @Test func aPasskeyApprovalWhosePasskeyUseFailsLeavesTheConfirmationPending() async throws {
        let configuration = ConfirmationTests.configuration()
        guard case .sqliteFile(let path) = configuration.database else { Issue.record("needs a SQLite file"); return }
        try await TestServer.runWithAdminKey(configuration: configuration) { client, key, _ in
            let owner = try await ConfirmationTests.owner(client, "atomic@example.com")
            var browser = PasskeyTests.Browser(client: client)
            var (credential, registered) = try await browser.register(owner.account.token)
            try #require(registered.status == .created)
            let (id, _) = try await ConfirmationTests.pending(client, owner)

            // The database refuses to record the passkey's use: a trigger, as a disk or constraint failure would.
            let raw = try await SQLiteExecutor.open(.file(path: path), logger: Logger(label: "test"))
            try await raw.withDatabase { db in
                try await db.raw("CREATE TRIGGER cut BEFORE UPDATE OF last_used_at ON passkeys BEGIN SELECT RAISE(ABORT, 'cut'); END").run()
            }
            let options = try await client.request(.post, "/v1/confirmations/\(id)/passkey-options", token: owner.account.token)
            let assertion = try browser.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
            let failed = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: String(decoding: assertion, as: UTF8.self))
            #expect(failed.status != .ok)
            let afterFailure = try await client.request(.get, "/v1/confirmations/\(id)", token: owner.account.token)
            #expect(afterFailure.value("confirmation", "status") ?? afterFailure.value("status") == "pending", "\(String(decoding: afterFailure.body, as: UTF8.self))")
            #expect(try await Self.approvals(client, key: key, userId: owner.account.userId) == 0)

            try await raw.withDatabase { db in try await db.raw("DROP TRIGGER cut").run() }
            try await raw.shutdown()
            let again = try await client.request(.post, "/v1/confirmations/\(id)/passkey-options", token: owner.account.token)
            let second = try browser.authenticator.respond(toRequestOptions: Array(again.body), credential: &credential, origin: PasskeyTests.origin)
            let approved = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: String(decoding: second, as: UTF8.self))
            #expect(approved.status == .ok, "\(String(decoding: approved.body, as: UTF8.self))")
            #expect(try await Self.approvals(client, key: key, userId: owner.account.userId) == 1)
            #expect(try await BackupEligibilityTests.listed(client, owner.account.token)["lastUsedAt"] is String)
        }
    }

    static func approvals(_ client: any TestClientProtocol, key: String, userId: String) async throws -> Int {
        let events = try await client.request(.get, "/v1/admin/events?userId=\(userId)&type=confirmation.approved", token: key)
        return (events.json["events"] as? [[String: Any]])?.count ?? -1
    }
}
