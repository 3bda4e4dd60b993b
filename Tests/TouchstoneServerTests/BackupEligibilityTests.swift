import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// Issue #29, item 5: an authenticator that changes a passkey's backup-eligible (BE) flag never fails a sign-in for
/// that alone. The change is stored, audited, counted and shown in the passkey list; an account that requires
/// device-bound passkeys refuses a credential that now reports BE=1.
struct BackupEligibilityTests {
    static let synced: AuthenticatorData.Flags = [.userPresent, .userVerified, .backupEligible, .backupState]
    static let deviceBound: AuthenticatorData.Flags = [.userPresent, .userVerified]

    /// The passkey as the list shows it.
    static func listed(_ client: any TestClientProtocol, _ token: String) async throws -> [String: Any] {
        let list = try await client.request(.get, "/v1/passkeys", token: token)
        return try #require((list.any(["passkeys"]) as? [[String: Any]])?.first)
    }

    static func changes(_ client: any TestClientProtocol, key: String, userId: String) async throws -> [[String: Any]] {
        let events = try await client.request(
            .get, "/v1/admin/events?userId=\(userId)&type=passkey.backup_eligibility_changed", token: key)
        return events.json["events"] as? [[String: Any]] ?? []
    }

    @Test(arguments: [(Self.synced, Self.deviceBound), (Self.deviceBound, Self.synced)])
    func aChangeEitherWayIsRecordedNotRefused(registeredWith: AuthenticatorData.Flags, laterReports: AuthenticatorData.Flags) async throws {
        try await TestServer.runWithAdminKey(configuration: PasskeyTests.configuration()) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            var browser = PasskeyTests.Browser(client: client)
            browser.authenticator.flags = registeredWith
            var (credential, registered) = try await browser.register(account.token)
            #expect(registered.status == .created)
            let before = registeredWith.contains(.backupEligible)
            #expect(registered.any(["passkey", "backupEligible"]) as? Bool == before)

            // The same flags again: nothing to record.
            #expect(try await browser.signIn(&credential).status == .ok)
            #expect(try await Self.changes(client, key: key, userId: account.userId).isEmpty)

            // The authenticator changes BE: the sign-in succeeds and the change is stored and audited.
            browser.authenticator.flags = laterReports
            let changed = try await browser.signIn(&credential)
            #expect(changed.status == .ok, "\(String(decoding: changed.body, as: UTF8.self))")
            #expect(changed.value("session", "token") != nil)
            let listed = try await Self.listed(client, account.token)
            #expect(listed["backupEligible"] as? Bool == !before)
            #expect(listed["backedUp"] as? Bool == laterReports.contains(.backupState))
            let events = try await Self.changes(client, key: key, userId: account.userId)
            #expect(events.count == 1)
            #expect(events.first?["outcome"] as? String == "info")
            #expect(events.first?["reason"] as? String == (before ? "no_longer_backup_eligible" : "now_backup_eligible"))
            #expect(events.first?["passkeyId"] as? String == listed["id"] as? String)

            // Signing in again with the new flags is no change.
            #expect(try await browser.signIn(&credential).status == .ok)
            #expect(try await Self.changes(client, key: key, userId: account.userId).count == 1)

            // Counted for operators.
            let metrics = String(decoding: try await client.request(.get, "/metrics").body, as: UTF8.self)
            let direction = before ? "lost" : "gained"
            #expect(metrics.contains("touchstone_passkey_backup_eligibility_changes_total{direction=\"\(direction)\"} 1"), "\(metrics)")
        }
    }

    /// The policy still holds: an account that requires device-bound passkeys refuses a passkey registered
    /// device-bound that now reports BE=1, and a BS flag without BE is still an error.
    @Test func aDeviceBoundAccountRefusesAPasskeyThatBecameBackupEligible() async throws {
        try await TestServer.runWithAdminKey(configuration: PasskeyTests.configuration()) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            let patched = try await client.request(
                .patch, "/v1/admin/users/\(account.userId)", token: key, json: ["requireDeviceBoundPasskeys": true])
            #expect(patched.status == .ok)
            var browser = PasskeyTests.Browser(client: client)
            browser.authenticator.flags = Self.deviceBound
            var (credential, registered) = try await browser.register(account.token)
            #expect(registered.status == .created)
            #expect(try await browser.signIn(&credential).status == .ok)

            browser.authenticator.flags = Self.synced
            let refused = try await browser.signIn(&credential)
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "device_bound_passkey_required")
            // Refused, so nothing about the passkey changed.
            #expect(try await Self.listed(client, account.token)["backupEligible"] as? Bool == false)

            browser.authenticator.flags = [.userPresent, .userVerified, .backupState]
            let contradictory = try await browser.signIn(&credential)
            #expect(contradictory.status == .unauthorized)
            #expect(contradictory.errorCode == "invalid_passkey_assertion", "\(String(decoding: contradictory.body, as: UTF8.self))")

            browser.authenticator.flags = Self.deviceBound
            #expect(try await browser.signIn(&credential).status == .ok)
        }
    }

    /// A passkey approving a transaction confirmation after its authenticator changed BE: approved, the flag stored
    /// and the change audited, as at sign-in.
    @Test func aConfirmationApprovedAfterABackupEligibilityChangeIsRecorded() async throws {
        try await TestServer.runWithAdminKey(configuration: ConfirmationTests.configuration()) { client, key, _ in
            let owner = try await ConfirmationTests.owner(client, "be-confirm@example.com")
            var browser = PasskeyTests.Browser(client: client)
            var (credential, registered) = try await browser.register(owner.account.token)
            try #require(registered.status == .created)
            let (id, _) = try await ConfirmationTests.pending(client, owner)
            let options = try await client.request(.post, "/v1/confirmations/\(id)/passkey-options", token: owner.account.token)
            browser.authenticator.flags = Self.deviceBound
            let assertion = try browser.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
            let approved = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: String(decoding: assertion, as: UTF8.self))
            #expect(approved.status == .ok, "\(String(decoding: approved.body, as: UTF8.self))")
            #expect(try await Self.listed(client, owner.account.token)["backupEligible"] as? Bool == false)
            let events = try await Self.changes(client, key: key, userId: owner.account.userId)
            #expect(events.map { $0["reason"] as? String } == ["no_longer_backup_eligible"])
        }
    }
}
