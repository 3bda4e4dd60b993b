import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// A password reset completed with a new passkey (issue #42): how an account without a password, whose passkey is
/// lost, gets back in by mail.
struct PasskeyResetTests {
    static func run(_ body: @Sendable (any TestClientProtocol, TestMailbox) async throws -> Void) async throws {
        let mailbox = TestMailbox()
        try await TestServer.run(configuration: PasskeyTests.configuration(), mailbox: mailbox) { client in
            try await body(client, mailbox)
        }
    }

    /// A passwordless account (a passkey sign-up) and its session.
    static func passwordless(_ client: any TestClientProtocol, _ email: String) async throws -> String {
        let options = try await PasskeySignUpTests.options(client, email)
        let (_, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
        return try #require(try await PasskeySignUpTests.verify(client, response).value("session", "token"))
    }

    static func confirm(_ client: any TestClientProtocol, proof: [String: any Sendable], passkey response: [UInt8]) async throws -> JSONTestResponse {
        var body: [String: Any] = proof
        body["passkey"] = try JSONSerialization.jsonObject(with: Data(response))
        body["name"] = "Recovered passkey"
        let data = try JSONSerialization.data(withJSONObject: body)
        return try await client.request(.post, "/v1/password-resets/confirm", raw: String(decoding: data, as: UTF8.self))
    }

    @Test func aMailedCodeAndANewPasskeyBringAPasswordlessAccountBack() async throws {
        try await Self.run { client, mailbox in
            let email = "lost@example.com"
            let old = try await Self.passwordless(client, email)
            #expect(try await client.request(.post, "/v1/password-resets", json: ["email": email]).status == .accepted)
            let code = try #require(try await mailbox.waitForMail(to: email, kind: "password_reset").code)
            let proof: [String: any Sendable] = ["email": email, "code": code]
            let options = try await client.request(.post, "/v1/password-resets/passkey-options", json: proof)
            #expect(options.status == .ok)
            #expect(options.value("user", "name") == email)
            #expect(options.value("authenticatorSelection", "userVerification") == "required")
            // The options did not use the code up: it still completes the reset, once.
            let authenticator = VirtualAuthenticator()
            var (credential, response) = try authenticator.respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
            let reset = try await Self.confirm(client, proof: proof, passkey: response)
            #expect(reset.status == .ok)
            #expect(reset.any(["session", "methods"]) as? [String] == ["passkey"])
            #expect(reset.any(["revokedSessions"]) as? Int == 1)
            #expect(reset.any(["user", "hasPassword"]) as? Bool == false)
            #expect(try await client.request(.get, "/v1/session", token: old).status == .unauthorized)
            // The new passkey signs in; the code is used; the address was told a passkey was added.
            let signIn = try await PasskeyTests.Browser(client: client, authenticator: authenticator).signIn(&credential)
            #expect(signIn.status == .ok && signIn.value("user", "email") == email)
            let again = try await Self.confirm(client, proof: proof, passkey: response)
            #expect(again.status == .badRequest && again.errorCode == "invalid_code")
            _ = try await mailbox.waitForMail(to: email, kind: "passkey_added")
        }
    }

    @Test func theLinkWorksTooAndBadAnswersAreRefused() async throws {
        try await Self.run { client, mailbox in
            let email = "link@example.com"
            _ = try await Self.passwordless(client, email)
            _ = try await client.request(.post, "/v1/password-resets", json: ["email": email])
            let token = try #require(try await mailbox.waitForMail(to: email, kind: "password_reset").token("reset-password"))
            // A wrong code, and no proof at all.
            let wrong = try await client.request(.post, "/v1/password-resets/passkey-options", json: ["email": email, "code": "000000"])
            #expect(wrong.status == .badRequest && wrong.errorCode == "invalid_code")
            let none = try await client.request(.post, "/v1/password-resets/passkey-options", json: [:])
            #expect(none.errorCode == "invalid_request")
            // A password and a passkey at once.
            let both = try await client.request(
                .post, "/v1/password-resets/confirm", json: ["token": token, "newPassword": "a new passphrase", "passkey": ["id": "x"]])
            #expect(both.errorCode == "invalid_request")
            // Options of another account's reset do not serve this one.
            let other = "other-link@example.com"
            _ = try await Self.passwordless(client, other)
            _ = try await client.request(.post, "/v1/password-resets", json: ["email": other])
            let otherCode = try #require(try await mailbox.waitForMail(to: other, kind: "password_reset").code)
            let foreign = try await client.request(.post, "/v1/password-resets/passkey-options", json: ["email": other, "code": otherCode])
            let (_, foreignResponse) = try VirtualAuthenticator().respond(toCreationOptions: Array(foreign.body), origin: PasskeyTests.origin)
            let crossed = try await Self.confirm(client, proof: ["token": token], passkey: foreignResponse)
            #expect(crossed.status == .unauthorized && crossed.errorCode == "challenge_not_found")
            // The link's own options complete it.
            let options = try await client.request(.post, "/v1/password-resets/passkey-options", json: ["token": token])
            let (_, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
            let reset = try await Self.confirm(client, proof: ["token": token], passkey: response)
            #expect(reset.status == .ok && reset.value("user", "email") == email)
        }
    }
}
