import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// Passkey-first sign-up (issue #42): `POST /v1/passkeys/sign-ups/options` and `/verify` create an account with a
/// passkey and no password.
struct PasskeySignUpTests {
    static func options(_ client: any TestClientProtocol, _ email: String, displayName: String? = nil) async throws -> JSONTestResponse {
        var body: [String: any Sendable] = ["email": email]
        if let displayName { body["displayName"] = displayName }
        return try await client.request(.post, "/v1/passkeys/sign-ups/options", json: body)
    }

    static func verify(_ client: any TestClientProtocol, _ response: [UInt8]) async throws -> JSONTestResponse {
        try await client.request(.post, "/v1/passkeys/sign-ups/verify", raw: String(decoding: response, as: UTF8.self))
    }

    @Test(arguments: NulInputTests.databases)
    func aPasskeyAloneCreatesTheAccount(database: NulInputTests.Database) async throws {
        try await NulInputTests.withStore(database) { store in
            let mailbox = TestMailbox()
            try await TestServer.run(configuration: PasskeyTests.configuration(), store: store, mailbox: mailbox) { client in
                let email = "first-\(UUID().uuidString.prefix(8).lowercased())@example.com"
                let options = try await Self.options(client, email.uppercased(), displayName: "Ana")
                #expect(options.status == .ok)
                #expect(options.value("user", "name") == email)
                #expect(options.value("user", "displayName") == "Ana")
                #expect(options.value("authenticatorSelection", "residentKey") == "required")
                #expect(options.value("authenticatorSelection", "userVerification") == "required")
                let authenticator = VirtualAuthenticator()
                var (credential, response) = try authenticator.respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
                let created = try await Self.verify(client, response)
                #expect(created.status == .created)
                #expect(created.value("user", "email") == email)
                #expect(created.any(["user", "hasPassword"]) as? Bool == false)
                #expect(created.any(["user", "emailVerified"]) as? Bool == false)
                #expect(created.any(["session", "methods"]) as? [String] == ["passkey"])
                let token = try #require(created.value("session", "token"))
                // A strong session: the export works right away; the address gets its verification mail.
                #expect(try await client.request(.get, "/v1/users/me/export", token: token).status == .ok)
                _ = try await mailbox.waitForMail(to: email, kind: "verify_email")
                // It signs in with the passkey; a password sign-in is what any wrong password is.
                let signIn = try await PasskeyTests.Browser(client: client, authenticator: authenticator).signIn(&credential)
                #expect(signIn.status == .ok && signIn.value("user", "email") == email)
                let password = try await client.request(.post, "/v1/sessions", json: ["email": email, "password": "anything at all"])
                #expect(password.errorCode == "invalid_credentials")
                // The same response again: the pending sign-up is gone.
                let replay = try await Self.verify(client, response)
                #expect(replay.status == .unauthorized && replay.errorCode == "challenge_not_found")
                // The address is taken now.
                let taken = try await Self.options(client, email)
                #expect(taken.status == .conflict && taken.errorCode == "email_taken")
            }
        }
    }

    @Test func badSignUpsAreRefusedAndCreateNothing() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: PasskeyTests.configuration(), clock: clock) { client in
            var authenticator = VirtualAuthenticator()
            // Without user verification.
            authenticator.flags.remove(.userVerified)
            let unverifiedOptions = try await Self.options(client, "nouv@example.com")
            let (_, unverified) = try authenticator.respond(toCreationOptions: Array(unverifiedOptions.body), origin: PasskeyTests.origin)
            let refused = try await Self.verify(client, unverified)
            #expect(refused.status == .badRequest && refused.errorCode == "invalid_passkey_registration")
            authenticator.flags.insert(.userVerified)
            // Expired.
            let late = try await Self.options(client, "late@example.com")
            clock.advance(by: 301)
            let (_, lateResponse) = try authenticator.respond(toCreationOptions: Array(late.body), origin: PasskeyTests.origin)
            #expect(try await Self.verify(client, lateResponse).errorCode == "challenge_expired")
            // A signed-in user's registration challenge is not a sign-up's, nor the other way round.
            let account = try await Flow(client: client).signUp("member@example.com")
            let memberOptions = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            let (_, memberResponse) = try authenticator.respond(toCreationOptions: Array(memberOptions.body), origin: PasskeyTests.origin)
            #expect(try await Self.verify(client, memberResponse).errorCode == "challenge_not_found")
            let signUpOptions = try await Self.options(client, "crossed@example.com")
            let (_, signUpResponse) = try authenticator.respond(toCreationOptions: Array(signUpOptions.body), origin: PasskeyTests.origin)
            let crossed = try await client.request(
                .post, "/v1/passkeys/registrations/verify", token: account.token, raw: String(decoding: signUpResponse, as: UTF8.self))
            #expect(crossed.errorCode == "challenge_not_found")
            // The address taken between the options and the answer.
            let raced = try await Self.options(client, "raced@example.com")
            #expect(try await Flow(client: client).signUp("raced@example.com").email == "raced@example.com")
            let (_, racedResponse) = try authenticator.respond(toCreationOptions: Array(raced.body), origin: PasskeyTests.origin)
            let taken = try await Self.verify(client, racedResponse)
            #expect(taken.status == .conflict && taken.errorCode == "email_taken")
            // None of these made an account.
            for email in ["nouv@example.com", "late@example.com", "crossed@example.com"] {
                #expect(try await Self.options(client, email).status == .ok, "\(email)")
            }
            let malformed = try await Self.options(client, "not an address")
            #expect(malformed.errorCode == "invalid_request")
        }
    }
}
