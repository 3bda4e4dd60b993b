import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TouchstoneServer
import TouchstoneTesting

/// The user's own sessions (issue #42): listed with where and how they were opened, ended one by one or all but the
/// current one, each ending announced to the OpenID clients holding tokens from it.
struct SessionListTests {
    static func list(_ client: any TestClientProtocol, _ token: String) async throws -> [[String: Any]] {
        let response = try await client.request(.get, "/v1/session/sessions", token: token)
        try #require(response.status == .ok, "\(String(decoding: response.body, as: UTF8.self))")
        return try #require(response.json["sessions"] as? [[String: Any]])
    }

    @Test func theListShowsEachLiveSessionWithWhereAndHowItWasOpened() async throws {
        try await TestServer.run(.live) { client in
            let flow = Flow(client: client)
            let longAgent = "Browser/1.0 " + String(repeating: "x", count: 300)
            let signUp = try await client.request(
                .post, "/v1/users", json: ["email": "list@example.com", "password": Flow.password], headers: [.userAgent: longAgent])
            let first = try #require(signUp.value("session", "token"))
            let second = try await flow.signIn("list@example.com")
            let sessions = try await Self.list(client, second)
            #expect(sessions.count == 2)
            let current = try #require(sessions.first { $0["current"] as? Bool == true })
            let other = try #require(sessions.first { $0["current"] as? Bool == false })
            #expect(current["methods"] as? [String] == ["password"])
            #expect(other["address"] as? String == "127.0.0.1")
            #expect((other["userAgent"] as? String)?.count == 200)
            #expect((other["userAgent"] as? String)?.hasPrefix("Browser/1.0 ") == true)
            #expect(other["client"] is NSNull)
            #expect((other["id"] as? String)?.isEmpty == false && other["createdAt"] is String && other["lastSeenAt"] is String)
            // Nothing secret: no token, no hash.
            let body = String(decoding: try await client.request(.get, "/v1/session/sessions", token: second).body, as: UTF8.self)
            #expect(!body.contains(first) && !body.contains(second) && !body.contains("token"))
        }
    }

    @Test func lastSeenMovesWithUse() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let account = try await Flow(client: client).signUp()
            let before = try #require(try await Self.list(client, account.token).first?["lastSeenAt"] as? String)
            clock.advance(by: 5 * 60)
            _ = try await client.request(.get, "/v1/session", token: account.token)
            let after = try #require(try await Self.list(client, account.token).first?["lastSeenAt"] as? String)
            #expect(after > before)
        }
    }

    @Test func endingOneSessionSignsItOutAndOnlyTheOwnerCan() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp("owner@example.com")
            let other = try await flow.signIn("owner@example.com")
            let stranger = try await flow.signUp("stranger@example.com")
            let otherId = try #require(try await Self.list(client, account.token).first { $0["current"] as? Bool == false }?["id"] as? String)

            let refused = try await client.request(.delete, "/v1/session/sessions/\(otherId)", token: stranger.token)
            #expect(refused.status == .notFound && refused.errorCode == "session_not_found")
            #expect(try await client.request(.get, "/v1/session", token: other).status == .ok)

            #expect(try await client.request(.delete, "/v1/session/sessions/\(otherId)", token: account.token).status == .noContent)
            #expect(try await client.request(.get, "/v1/session", token: other).status == .unauthorized)
            let again = try await client.request(.delete, "/v1/session/sessions/\(otherId)", token: account.token)
            #expect(again.status == .notFound && again.errorCode == "session_not_found")
            let unknown = try await client.request(.delete, "/v1/session/sessions/no-such-session", token: account.token)
            #expect(unknown.errorCode == "session_not_found")
            #expect(try await Self.list(client, account.token).count == 1)
            let events = try await flow.events(account.token)
            #expect(events.contains { $0["type"] as? String == "session.revoked" && $0["reason"] as? String == "user" })

            // The caller's own session may be ended too: that is a sign-out.
            let ownId = try #require(try await Self.list(client, account.token).first?["id"] as? String)
            #expect(try await client.request(.delete, "/v1/session/sessions/\(ownId)", token: account.token).status == .noContent)
            #expect(try await client.request(.get, "/v1/session/sessions", token: account.token).status == .unauthorized)
        }
    }

    @Test func revokeOthersKeepsOnlyTheCurrentSession() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp("many@example.com")
            let others = [try await flow.signIn("many@example.com"), try await flow.signIn("many@example.com")]
            let response = try await client.request(.post, "/v1/session/sessions/revoke-others", token: account.token)
            #expect(response.status == .ok)
            #expect(response.json["revokedSessions"] as? Int == 2)
            for token in others { #expect(try await client.request(.get, "/v1/session", token: token).status == .unauthorized) }
            let left = try await Self.list(client, account.token)
            #expect(left.count == 1 && left.first?["current"] as? Bool == true)
            #expect(try await client.request(.post, "/v1/session/sessions/revoke-others", token: account.token).json["revokedSessions"] as? Int == 0)
            #expect(try await client.request(.get, "/v1/session/sessions").status == .unauthorized)
        }
    }

    @Test func endingAnOpenIDSessionSendsItsClientABackChannelLogout() async throws {
        let receiver = TokenLifecycleTests.Receiver()
        try await TestServer.runWithAdminKey(postForm: receiver.post) { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true, backchannel: "https://app.example.com/backchannel")
            let (email, _) = try await AuthorizationCodeFlowTests.signUp(client)
            var browser = OpenIDBrowser(client)
            let tokens = try await TokenLifecycleTests.tokens(client, app, &browser, email: email)
            let sid = try #require(jwtPayload(tokens.value("id_token") ?? "")["sid"] as? String)
            let phone = try await Flow(client: client).signIn(email)
            let listed = try await Self.list(client, phone)
            let openID = try #require(listed.first { $0["id"] as? String == sid })
            #expect(openID["client"] as? String == "Test app")

            #expect(try await client.request(.delete, "/v1/session/sessions/\(sid)", token: phone).status == .noContent)
            #expect(await receiver.next())
            let body = try #require(receiver.posts.withLockedValue { $0.first?.1 })
            let token = String(body.dropFirst("logout_token=".count)).removingPercentEncoding ?? ""
            #expect(jwtPayload(token)["sid"] as? String == sid)
        }
    }
}
