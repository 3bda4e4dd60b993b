import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// The admin console: its page, and the admin API it adds (activity by time bucket, sessions, unlocking).
struct AdminConsoleTests {
    @Test func theConsoleIsServedWithAStrictContentSecurityPolicy() async throws {
        try await TestServer.run { client in
            for (path, type) in [("/admin/", "text/html"), ("/admin", "text/html"), ("/admin/admin.js", "text/javascript"), ("/admin/admin-dom.js", "text/javascript"), ("/admin/admin.css", "text/css")] {
                let response = try await client.request(.get, path)
                #expect(response.status == .ok, "\(path)")
                #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(path)")
                #expect(response.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
                #expect(response.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            }
            let page = String(decoding: try await client.request(.get, "/admin/").body, as: UTF8.self)
            // No inline script or style: every script is a file of this origin.
            #expect(!page.contains("<script>") && !page.contains("onclick") && !page.contains("style="))
            for path in ["/admin/admin.js", "/admin/admin-dom.js"] {
                let script = String(decoding: try await client.request(.get, path).body, as: UTF8.self)
                #expect(!script.isEmpty, "\(path)")
                #expect(!script.contains("localStorage") && !script.contains("sessionStorage") && !script.contains("document.cookie"))
            }
            // The helpers come before the console that uses them (both deferred: run in order).
            let scripts = page.ranges(of: "<script src=").count
            #expect(scripts == 2 && page.range(of: "admin-dom.js")!.lowerBound < page.range(of: "/admin/admin.js")!.lowerBound)
        }
    }

    @Test func statsCountSignInsByBucketMethodAndOutcome() async throws {
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(clock: clock) { client, key, _ in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            _ = try await flow.signIn(account.email)
            let wrong = try await client.request(.post, "/v1/sessions", json: ["email": account.email, "password": "wrong password"])
            #expect(wrong.status == .unauthorized)
            let device = TestDeviceKey(.es256)
            let registration = try await flow.enroll(try await flow.signIn(account.email), device)
            #expect(try await flow.login(registration, device).status == .ok)
            // Ten minutes later: another bucket of the hour.
            clock.advance(by: 600)
            #expect(try await flow.login(registration, device).status == .ok)
            let challenge = try await flow.challenge(registration)
            #expect(try await flow.finishLogin(registration, challenge: challenge, signature: TestDeviceKey(.es256).signed(challenge)).errorCode
                == "invalid_signature")

            let hour = try await client.request(.get, "/v1/admin/stats?window=hour", token: key)
            #expect(hour.status == .ok)
            #expect(hour.any(["bucketSeconds"]) as? Int == 300)
            let buckets = try #require(hour.json["buckets"] as? [[String: Any]])
            #expect(buckets.count == 12)
            func total(_ method: String, _ outcome: String) -> Int {
                buckets.reduce(0) { $0 + ((($1["signIns"] as? [String: [String: Int]])?[method]?[outcome]) ?? 0) }
            }
            #expect(total("password", "success") == 2)
            #expect(total("password", "failure") == 1)
            #expect(total("biometric", "success") == 2)
            #expect(total("biometric", "failure") == 1)
            // The last bucket holds what happened after the clock moved on.
            let last = try #require(buckets.last?["signIns"] as? [String: [String: Int]])
            #expect(last["biometric"] == ["success": 1, "failure": 1])
            #expect(last["password"] == ["success": 0, "failure": 0])
            let failures = try #require(hour.json["failuresByCode"] as? [String: Int])
            #expect(failures == ["invalid_credentials": 1, "invalid_signature": 1])

            let day = try await client.request(.get, "/v1/admin/stats?window=day", token: key)
            #expect((day.json["buckets"] as? [Any])?.count == 24)
            #expect(day.any(["bucketSeconds"]) as? Int == 3600)

            let bad = try await client.request(.get, "/v1/admin/stats?window=week", token: key)
            #expect(bad.status == .badRequest)
            #expect(bad.errorCode == "invalid_request")
            #expect(try await client.request(.get, "/v1/admin/stats").status == .unauthorized)
        }
    }

    @Test func aUsersLiveSessionsAreListedWithoutTheirTokens() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let second = try await flow.signIn(account.email)
            let response = try await client.request(.get, "/v1/admin/users/\(account.userId)/sessions", token: key)
            #expect(response.status == .ok)
            let sessions = try #require(response.json["sessions"] as? [[String: Any]])
            #expect(sessions.count == 2)
            #expect(sessions.allSatisfy { ($0["methods"] as? [String]) == ["password"] })
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(!text.contains(account.token) && !text.contains(second) && !text.contains("tokenHash"))
            // Signed out: gone from the list.
            _ = try await client.request(.delete, "/v1/session", token: second)
            let after = try await client.request(.get, "/v1/admin/users/\(account.userId)/sessions", token: key)
            #expect((after.json["sessions"] as? [Any])?.count == 1)
            let unknown = try await client.request(.get, "/v1/admin/users/no-such-user/sessions", token: key)
            #expect(unknown.status == .notFound)
            #expect(unknown.errorCode == "user_not_found")
        }
    }

    @Test func anAdminUnlocksALockedDeviceOrPasskeyAndTheTrailSaysWho() async throws {
        try await TestServer.runWithAdminKey(configuration: PasskeyTests.configuration()) { client, key, store in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let registration = try await flow.enroll(account.token, device)
            let notLocked = try await client.request(.post, "/v1/admin/registrations/\(registration)/unlock", token: key)
            #expect(notLocked.status == .conflict)
            #expect(notLocked.errorCode == "registration_not_locked")
            for _ in 0..<3 { _ = try await store.recordFailedSignature(registrationId: registration, threshold: 3, at: Date()) }
            #expect(try await flow.startLogin(registration).errorCode == "registration_locked")
            #expect(try await client.request(.post, "/v1/admin/registrations/\(registration)/unlock", token: key).status == .noContent)
            #expect(try await flow.login(registration, device).status == .ok)
            let unknown = try await client.request(.post, "/v1/admin/registrations/nope/unlock", token: key)
            #expect(unknown.errorCode == "registration_not_found")

            let browser = PasskeyTests.Browser(client: client)
            let (_, registered) = try await browser.register(account.token)
            let passkeyId = try #require(registered.value("passkey", "id"))
            let passkeyNotLocked = try await client.request(.post, "/v1/admin/passkeys/\(passkeyId)/unlock", token: key)
            #expect(passkeyNotLocked.errorCode == "passkey_not_locked")
            for _ in 0..<3 { _ = try await store.recordFailedPasskeyAssertion(id: passkeyId, threshold: 3, at: Date()) }
            #expect(try await client.request(.post, "/v1/admin/passkeys/\(passkeyId)/unlock", token: key).status == .noContent)
            let noPasskey = try await client.request(.post, "/v1/admin/passkeys/nope/unlock", token: key)
            #expect(noPasskey.errorCode == "passkey_not_found")

            let events = try await client.request(.get, "/v1/admin/events?userId=\(account.userId)&type=registration.unlocked", token: key)
            let unlocked = try #require((events.json["events"] as? [[String: Any]])?.first)
            #expect(unlocked["reason"] as? String == "admin:ops")
            let passkeyEvents = try await client.request(.get, "/v1/admin/events?userId=\(account.userId)&type=passkey.unlocked", token: key)
            #expect((passkeyEvents.json["events"] as? [[String: Any]])?.first?["reason"] as? String == "admin:ops")
        }
    }
}
