import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

struct AccountTests {
    @Test func signUpReturnsUserAndPasswordSession() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let response = try await client.request(
                .post,
                "/v1/users",
                json: ["email": "Ana@Example.COM", "password": "correct horse", "displayName": "Ana"]
            )
            #expect(response.status == .created)
            #expect(response.value("user", "email") == "ana@example.com")
            #expect(response.value("user", "displayName") == "Ana")
            #expect(response.value("user", "createdAt") == "2027-01-15T08:00:00.000Z")
            #expect(response.any(["session", "methods"]) as? [String] == ["password"])
            #expect(response.value("session", "token")?.count == 43)
            #expect(response.value("session", "expiresAt") == "2027-02-14T08:00:00.000Z")  // 30 days
            #expect(response.value("session", "idleExpiresAt") == "2027-01-15T08:15:00.000Z")  // 15 minutes
        }
    }

    @Test func displayNameIsNullWhenAbsent() async throws {
        try await TestServer.run { client in
            let response = try await client.request(.post, "/v1/users", json: ["email": "a@example.com", "password": "12345678"])
            let user = try #require(response.json["user"] as? [String: Any])
            #expect(user.keys.contains("displayName"))
            #expect(user["displayName"] is NSNull)
        }
    }

    @Test func takenEmailIsRejectedCaseInsensitively() async throws {
        try await TestServer.run { client in
            _ = try await Flow(client: client).signUp("taken@example.com")
            let response = try await client.request(.post, "/v1/users", json: ["email": "TAKEN@example.com", "password": "12345678"])
            #expect(response.status == .conflict)
            #expect(response.errorCode == "email_taken")
        }
    }

    @Test(arguments: [
        (["email": "a@example.com", "password": "short"], "password"),
        (["email": "not-an-email", "password": "12345678"], "email"),
        (["email": "a@b", "password": "12345678"], "email"),
        (["email": "a b@example.com", "password": "12345678"], "email"),
        (["password": "12345678"], "email"),
        (["email": "a@example.com"], "password"),
        (["email": "a@example.com", "password": String(repeating: "x", count: 1025)], "password"),
        (["email": " a@example.com", "password": "12345678"], "email"),
        (["email": "a@example.com\u{0}", "password": "12345678"], "email"),
        (["email": "a@example.com", "password": "12345678", "displayName": "Ana\u{7}"], "displayName"),
        (["email": "a@example.com", "password": "12345678", "displayName": String(repeating: "n", count: 201)], "displayName"),
        (["email": "a@example.com", "password": "12345678", "displayName": String(repeating: "名", count: 201)], "displayName"),
    ] as [([String: String], String)])
    func invalidSignUpIsRejectedNamingTheField(body: [String: String], field: String) async throws {
        try await TestServer.run { client in
            let response = try await client.request(.post, "/v1/users", json: body)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
            let message = try #require((response.json["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains(field), "message '\(message)' should name \(field)")
        }
    }

    /// The OpenAPI document's `maxLength` counts code points (JSON Schema): 200 of any script are one name, and so is a
    /// device id of 200 that are not ASCII.
    @Test(arguments: ["名", "é", "😀"])
    func namesOf200CharactersOfAnyScriptAreTaken(character: String) async throws {
        try await TestServer.run { client in
            let name = String(repeating: character, count: 200)
            let response = try await client.request(.post, "/v1/users", json: ["email": "names@example.com", "password": "12345678", "displayName": name])
            #expect(response.status == .created, "\(response.json)")
            let token = try #require(response.value("session", "token"))
            let session = try await client.request(.get, "/v1/session", token: token)
            #expect(session.value("user", "displayName") == name)
            let start = try await Flow(client: client).startRegistration(token, TestDeviceKey(.es256), deviceId: name)
            #expect(start.status == .ok, "\(start.json)")
        }
    }

    @Test func passwordSignInWorksAndWrongCredentialsAreRejected() async throws {
        try await TestServer.run { client in
            let account = try await Flow(client: client).signUp("sign-in@example.com")
            let ok = try await client.request(.post, "/v1/sessions", json: ["email": "Sign-In@example.com", "password": Flow.password])
            #expect(ok.status == .ok)
            #expect(ok.value("user", "id") == account.userId)
            #expect(ok.value("session", "token") != account.token)

            for body in [
                ["email": "sign-in@example.com", "password": "wrong password"],
                ["email": "nobody@example.com", "password": Flow.password],
            ] {
                let response = try await client.request(.post, "/v1/sessions", json: body)
                #expect(response.status == .unauthorized)
                #expect(response.errorCode == "invalid_credentials")
            }
        }
    }

    @Test func currentSessionNeedsAValidBearerToken() async throws {
        try await TestServer.run { client in
            let account = try await Flow(client: client).signUp()
            let ok = try await client.request(.get, "/v1/session", token: account.token)
            #expect(ok.status == .ok)
            #expect(ok.value("user", "id") == account.userId)

            let missing = try await client.request(.get, "/v1/session")
            let unknown = try await client.request(.get, "/v1/session", token: "not-a-real-token")
            let malformed = try await client.request(.get, "/v1/session", headers: [.authorization: "Basic abc"])
            for response in [missing, unknown, malformed] {
                #expect(response.status == .unauthorized)
                #expect(response.errorCode == "unauthenticated")
            }
        }
    }

    @Test func signOutRevokesTheToken() async throws {
        try await TestServer.run { client in
            let account = try await Flow(client: client).signUp()
            let signOut = try await client.request(.delete, "/v1/session", token: account.token)
            #expect(signOut.status == .noContent)
            let after = try await client.request(.get, "/v1/session", token: account.token)
            #expect(after.status == .unauthorized)
            #expect(after.errorCode == "unauthenticated")
        }
    }

    @Test func idleSessionsExpireAndUseRefreshesTheIdleDeadline() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let account = try await Flow(client: client).signUp()
            clock.advance(by: 14 * 60)
            #expect(try await client.request(.get, "/v1/session", token: account.token).status == .ok)
            clock.advance(by: 14 * 60)  // 28 minutes after sign-in, 14 after last use
            let refreshed = try await client.request(.get, "/v1/session", token: account.token)
            #expect(refreshed.status == .ok)
            clock.advance(by: 15 * 60 + 1)
            let idle = try await client.request(.get, "/v1/session", token: account.token)
            #expect(idle.status == .unauthorized)
            #expect(idle.errorCode == "unauthenticated")
        }
    }

    @Test func sessionsExpireAtTheirAbsoluteLifetime() async throws {
        let clock = ManualClock()
        let configuration = TestServer.configuration {
            $0.sessionLifetime = .seconds(600)
            $0.sessionIdleTimeout = .seconds(900)
        }
        try await TestServer.run(configuration: configuration, clock: clock) { client in
            let account = try await Flow(client: client).signUp()
            clock.advance(by: 599)
            #expect(try await client.request(.get, "/v1/session", token: account.token).status == .ok)
            clock.advance(by: 2)
            let expired = try await client.request(.get, "/v1/session", token: account.token)
            #expect(expired.status == .unauthorized)
            #expect(expired.errorCode == "unauthenticated")
        }
    }
}
