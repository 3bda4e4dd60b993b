import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// Automatic passkey upgrades: a passkey made with `mediation: "conditional"` right after a password sign-in, without
/// a gesture (no UP flag), accepted as such and recorded.
struct ConditionalCreateTests {
    /// Registration options, answered by an authenticator that creates without user presence or verification.
    static func silentRegistration(_ client: any TestClientProtocol, _ token: String) async throws -> [String: Any] {
        let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: token, json: [:])
        var authenticator = VirtualAuthenticator()
        authenticator.flags = [.backupEligible, .backupState]
        let (_, response) = try authenticator.respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
        return try #require(try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any])
    }

    static func verify(_ client: any TestClientProtocol, _ token: String, _ body: [String: Any]) async throws -> JSONTestResponse {
        try await client.request(
            .post, "/v1/passkeys/registrations/verify", token: token,
            raw: String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self))
    }

    @Test func aConditionalCreateNeedsNoGestureAndIsRecorded() async throws {
        try await TestServer.runWithAdminKey(configuration: PasskeyTests.configuration()) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            // Without user presence, an ordinary registration is refused...
            let modal = try await Self.verify(client, account.token, try await Self.silentRegistration(client, account.token))
            #expect(modal.status == .badRequest)
            #expect(modal.errorCode == "invalid_passkey_registration")
            #expect(((modal.json["error"] as? [String: Any])?["message"] as? String)?.hasPrefix("user_not_present") == true)
            // ... and an automatic upgrade is accepted.
            var body = try await Self.silentRegistration(client, account.token)
            body["mediation"] = "conditional"
            let upgraded = try await Self.verify(client, account.token, body)
            #expect(upgraded.status == .created, "\(String(decoding: upgraded.body, as: UTF8.self))")
            #expect(upgraded.value("passkey", "createdVia") == "conditional")
            let list = try await client.request(.get, "/v1/passkeys", token: account.token)
            #expect((list.json["passkeys"] as? [[String: Any]])?.first?["createdVia"] as? String == "conditional")
            let events = try await client.request(.get, "/v1/admin/events?userId=\(account.userId)&type=passkey.added", token: key)
            #expect((events.json["events"] as? [[String: Any]])?.first?["reason"] as? String == "conditional")
        }
    }

    @Test func theMediationMustBeKnown() async throws {
        try await TestServer.run(configuration: PasskeyTests.configuration()) { client in
            let account = try await Flow(client: client).signUp()
            var body = try await Self.silentRegistration(client, account.token)
            body["mediation"] = "silent"
            let response = try await Self.verify(client, account.token, body)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
            // A modal registration says so.
            let (_, registered) = try await PasskeyTests.Browser(client: client).register(account.token)
            #expect(registered.value("passkey", "createdVia") == "modal")
        }
    }
}
