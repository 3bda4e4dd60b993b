import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// An account whose passkeys must be device-bound: synced passkeys are refused at registration and at sign-in.
struct DeviceBoundPasskeyTests {
    @Test func anAdminRequiresDeviceBoundPasskeysForAnAccount() async throws {
        try await TestServer.runWithAdminKey(configuration: PasskeyTests.configuration()) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            // A synced passkey (backup eligible and backed up: the virtual authenticator's default), before the policy.
            var synced = PasskeyTests.Browser(client: client)
            var (syncedCredential, registered) = try await synced.register(account.token)
            #expect(registered.status == .created)
            #expect(registered.any(["passkey", "backupEligible"]) as? Bool == true)

            let patched = try await client.request(
                .patch, "/v1/admin/users/\(account.userId)", token: key, json: ["requireDeviceBoundPasskeys": true])
            #expect(patched.status == .ok)
            #expect(patched.json["requireDeviceBoundPasskeys"] as? Bool == true)
            #expect(try await client.request(.get, "/v1/admin/users/\(account.userId)", token: key).json["requireDeviceBoundPasskeys"] as? Bool == true)

            // The synced passkey no longer signs in; another one cannot be registered.
            let refused = try await synced.signIn(&syncedCredential)
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "device_bound_passkey_required")
            let token = try await Flow(client: client).signIn(account.email)
            let (_, second) = try await synced.register(token)
            #expect(second.errorCode == "device_bound_passkey_required")
            // A device-bound one (a security key: no backup flags) registers and signs in.
            var bound = PasskeyTests.Browser(client: client)
            bound.authenticator.flags = [.userPresent, .userVerified]
            var (boundCredential, boundRegistered) = try await bound.register(token)
            #expect(boundRegistered.status == .created)
            #expect(boundRegistered.any(["passkey", "backupEligible"]) as? Bool == false)
            #expect(try await bound.signIn(&boundCredential).status == .ok)

            // Audited with the admin key; lifting the policy lets the synced passkey in again.
            let events = try await client.request(
                .get, "/v1/admin/events?userId=\(account.userId)&type=user.passkey_policy_changed", token: key)
            #expect((events.json["events"] as? [[String: Any]])?.first?["reason"] as? String == "admin:ops: device-bound passkeys required")
            _ = try await client.request(.patch, "/v1/admin/users/\(account.userId)", token: key, json: ["requireDeviceBoundPasskeys": false])
            #expect(try await synced.signIn(&syncedCredential).status == .ok)
            _ = synced
        }
    }

    @Test func theSettingIsValidated() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let unknown = try await client.request(.patch, "/v1/admin/users/nobody", token: key, json: ["requireDeviceBoundPasskeys": true])
            #expect(unknown.status == .notFound)
            #expect(unknown.errorCode == "user_not_found")
            let account = try await Flow(client: client).signUp()
            for body in [["requireDeviceBoundPasskeys": "yes"], [:]] as [[String: any Sendable]] {
                let bad = try await client.request(.patch, "/v1/admin/users/\(account.userId)", token: key, json: body)
                #expect(bad.status == .badRequest)
                #expect(bad.errorCode == "invalid_request")
            }
            #expect(try await client.request(.patch, "/v1/admin/users/\(account.userId)", json: ["requireDeviceBoundPasskeys": true]).status == .unauthorized)
        }
    }
}
