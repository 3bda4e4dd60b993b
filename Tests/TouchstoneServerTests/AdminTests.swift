import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// The admin API: admin keys only; users, registrations, passkeys, sessions, events and the runtime policy.
struct AdminTests {
    /// Runs the server on a store that has one admin key; `body` gets the client and the key.
    func withAdmin(
        clock: ManualClock = ManualClock(),
        _ body: @Sendable (any TestClientProtocol, String, any TouchstoneStore) async throws -> Void
    ) async throws {
        try await TestServer.runWithAdminKey(clock: clock, body)
    }

    @Test func onlyAdminKeysGetIn() async throws {
        try await self.withAdmin { client, key, store in
            let account = try await Flow(client: client).signUp()
            #expect(try await client.request(.get, "/v1/admin/users").status == .unauthorized)
            let user = try await client.request(.get, "/v1/admin/users", token: account.token)
            #expect(user.status == .forbidden)
            #expect(user.errorCode == "admin_key_required")
            #expect(try await client.request(.get, "/v1/admin/users", token: "tsa_made-up").errorCode == "admin_key_required")
            #expect(try await client.request(.get, "/v1/admin/users", token: key).status == .ok)
            // A revoked key stops working at once.
            let record = try #require(try await store.adminKeys().first)
            try await store.revokeAdminKey(id: record.id, at: Date())
            #expect(try await client.request(.get, "/v1/admin/users", token: key).errorCode == "admin_key_required")
        }
    }

    @Test func findUsersAndTheirDevices() async throws {
        try await self.withAdmin { client, key, _ in
            let flow = Flow(client: client)
            let ana = try await flow.signUp("ana@example.com")
            _ = try await flow.signUp("bob@example.com")
            _ = try await flow.signUp("ana_b@example.org")
            let id = try await flow.enroll(ana.token, TestDeviceKey(.es256))

            let all = try await client.request(.get, "/v1/admin/users?limit=2", token: key)
            #expect((all.json["users"] as? [[String: Any]])?.count == 2)
            let cursor = try #require(all.json["nextCursor"] as? String)
            let rest = try await client.request(.get, "/v1/admin/users?limit=2&cursor=\(cursor)", token: key)
            #expect((rest.json["users"] as? [[String: Any]])?.count == 1)
            #expect(rest.json["nextCursor"] == nil)

            // `_` is a literal, not a wildcard.
            let found = try await client.request(.get, "/v1/admin/users?email=ana_", token: key)
            #expect((found.json["users"] as? [[String: Any]])?.compactMap { $0["email"] as? String } == ["ana_b@example.org"])

            let detail = try await client.request(.get, "/v1/admin/users/\(ana.userId)", token: key)
            #expect(detail.value("user", "email") == "ana@example.com")
            #expect((detail.json["registrations"] as? [[String: Any]])?.first?["id"] as? String == id)
            #expect((detail.json["passkeys"] as? [[String: Any]])?.isEmpty == true)
            let missing = try await client.request(.get, "/v1/admin/users/nobody", token: key)
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "user_not_found")
            #expect(try await client.request(.get, "/v1/admin/users?limit=0", token: key).errorCode == "invalid_request")
        }
    }

    @Test func revokeRegistrationsPasskeysAndEverySession() async throws {
        try await self.withAdmin { client, key, _ in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let biometricToken = try #require(try await flow.login(id, device).value("session", "token"))

            let revoke = try await client.request(.delete, "/v1/admin/registrations/\(id)", token: key)
            #expect(revoke.status == .noContent)
            #expect(try await flow.startLogin(id).errorCode == "registration_revoked")
            #expect(try await client.request(.delete, "/v1/admin/registrations/nope", token: key).errorCode == "registration_not_found")
            #expect(try await client.request(.delete, "/v1/admin/passkeys/nope", token: key).errorCode == "passkey_not_found")

            let signOut = try await client.request(.post, "/v1/admin/users/\(account.userId)/sign-out", token: key)
            #expect(signOut.status == .ok)
            #expect(signOut.any(["revokedSessions"]) as? Int == 2)
            #expect(try await client.request(.get, "/v1/session", token: account.token).status == .unauthorized)
            #expect(try await client.request(.get, "/v1/session", token: biometricToken).status == .unauthorized)
            #expect(try await client.request(.post, "/v1/admin/users/nobody/sign-out", token: key).errorCode == "user_not_found")

            // Both actions are in the trail, attributed to the key.
            let events = try await client.request(.get, "/v1/admin/events?userId=\(account.userId)", token: key)
            let list = try #require(events.json["events"] as? [[String: Any]])
            #expect(list.first?["type"] as? String == "session.revoked_all")
            #expect(list.first?["reason"] as? String == "admin:ops")
            #expect(list.contains { $0["type"] as? String == "registration.revoked" && $0["reason"] as? String == "admin:ops" })
            let filtered = try await client.request(.get, "/v1/admin/events?type=user.created", token: key)
            #expect((filtered.json["events"] as? [[String: Any]])?.count == 1)
            let since = try await client.request(.get, "/v1/admin/events?since=2999-01-01T00:00:00Z", token: key)
            #expect((since.json["events"] as? [[String: Any]])?.isEmpty == true)
            #expect(try await client.request(.get, "/v1/admin/events?since=yesterday", token: key).errorCode == "invalid_request")
            // Any offset RFC 3339 allows, up to 23:59 (Foundation's parser stopped at 18 hours).
            let farOffset = try await client.request(.get, "/v1/admin/events?since=2999-01-01T00:00:00-23:59", token: key)
            #expect(farOffset.status == .ok && (farOffset.json["events"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    @Test func theRuntimePolicyChangesWhileRunning() async throws {
        try await self.withAdmin { client, key, store in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let policy = try await client.request(.get, "/v1/admin/policy", token: key)
            #expect(policy.any(["biometricsEnabled"]) as? Bool == true)
            #expect(policy.any(["lockoutThreshold"]) as? Int == 5)

            let off = try await client.request(.patch, "/v1/admin/policy", token: key, json: ["biometricsEnabled": false])
            #expect(off.status == .ok)
            #expect(try await flow.startRegistration(account.token, TestDeviceKey(.es256)).errorCode == "biometrics_disabled")
            let config = try await client.request(.get, "/v1/config")
            #expect(config.any(["biometrics", "enabled"]) as? Bool == false)
            // Stored, so other instances (and restarts) see it.
            #expect(try await store.setting(name: "policy")?.contains("\"biometricsEnabled\":false") == true)

            let on = try await client.request(
                .patch,
                "/v1/admin/policy",
                token: key,
                json: ["biometricsEnabled": true, "algorithms": ["EdDSA"], "sessionLifetimeMinutes": 60]
            )
            #expect(on.any(["algorithms"]) as? [String] == ["EdDSA"])
            let es256 = try await flow.startRegistration(account.token, TestDeviceKey(.es256))
            #expect(es256.errorCode == "unsupported_algorithm")
            let session = try await client.request(.post, "/v1/sessions", json: ["email": account.email, "password": Flow.password])
            let expires = try #require(session.value("session", "expiresAt"))
            let authenticated = try #require(session.value("session", "authenticatedAt"))
            let lifetime = try #require(AuditPagingDates.seconds(from: authenticated, to: expires))
            #expect(lifetime == 3600)

            for bad: [String: any Sendable] in [
                ["lockoutThreshold": 0], ["algorithms": [String]()], ["algorithms": ["MD5"]], ["devicePolicy": "both"],
                ["sessionIdleMinutes": 61], ["pinMaxAttempts": "three"],
            ] {
                let response = try await client.request(.patch, "/v1/admin/policy", token: key, json: bad)
                #expect(response.errorCode == "invalid_request", "\(bad)")
            }
        }
    }
}

enum AuditPagingDates {
    static func seconds(from start: String, to end: String) -> Int? {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        guard let a = try? Date(start, strategy: style), let b = try? Date(end, strategy: style) else { return nil }
        return Int(b.timeIntervalSince(a).rounded())
    }
}
