import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// WebAuthn Level 3 `hints` in the ceremony options: from the request, else from configuration, else none; and what the
/// passkey list gives a page for the Signal API.
struct PasskeyHintsTests {
    @Test func thePasskeyListCarriesWhatTheSignalAPINeeds() async throws {
        try await TestServer.run(configuration: PasskeyTests.configuration()) { client in
            let account = try await Flow(client: client).signUp()
            let browser = PasskeyTests.Browser(client: client)
            let (credential, _) = try await browser.register(account.token)
            let list = try await client.request(.get, "/v1/passkeys", token: account.token)
            #expect(list.value("rpId") == "app.example")
            // The user handle the passkey was made with (the creation options' user.id).
            #expect(list.value("userHandle") == Base64.urlEncode(Array(account.userId.utf8)))
            let passkeys = try #require(list.json["passkeys"] as? [[String: Any]])
            #expect(passkeys.first?["credentialId"] as? String == Base64.urlEncode(credential.id))
        }
    }

    @Test func optionsCarryTheRequestsHintsOrTheConfiguredOnes() async throws {
        let configuration = PasskeyTests.configuration { $0.passkeys.hints = ["client-device", "hybrid"] }
        try await TestServer.run(configuration: configuration) { client in
            let account = try await Flow(client: client).signUp()
            let configured = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            #expect(configured.json["hints"] as? [String] == ["client-device", "hybrid"])
            let asked = try await client.request(
                .post, "/v1/passkeys/registrations/options", token: account.token, json: ["hints": ["security-key"]])
            #expect(asked.json["hints"] as? [String] == ["security-key"])
            let signIn = try await client.request(.post, "/v1/passkeys/authentications/options", json: ["hints": ["hybrid", "client-device"]])
            #expect(signIn.json["hints"] as? [String] == ["hybrid", "client-device"])
            let defaulted = try await client.request(.post, "/v1/passkeys/authentications/options", json: [:])
            #expect(defaulted.json["hints"] as? [String] == ["client-device", "hybrid"])
            // No body at all still works.
            let bare = try await client.request(.post, "/v1/passkeys/authentications/options")
            #expect(bare.status == .ok)
        }
    }

    @Test func withoutHintsTheOptionsHaveNone() async throws {
        try await TestServer.run(configuration: PasskeyTests.configuration()) { client in
            let account = try await Flow(client: client).signUp()
            let creation = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            #expect(creation.status == .ok)
            #expect(creation.json["hints"] == nil)
            #expect(try await client.request(.post, "/v1/passkeys/authentications/options", json: [:]).json["hints"] == nil)
        }
    }

    @Test func unknownOrRepeatedHintsAreRefused() async throws {
        try await TestServer.run(configuration: PasskeyTests.configuration()) { client in
            let account = try await Flow(client: client).signUp()
            for hints in [["usb"], ["hybrid", "hybrid"]] {
                let creation = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: ["hints": hints])
                #expect(creation.status == .badRequest)
                #expect(creation.errorCode == "invalid_request")
                let request = try await client.request(.post, "/v1/passkeys/authentications/options", json: ["hints": hints])
                #expect(request.errorCode == "invalid_request")
            }
            let notJSON = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, raw: "hints")
            #expect(notJSON.errorCode == "invalid_request")
        }
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_PASSKEY_HINTS": "security-key,usb"]) }
        #expect(try TouchstoneConfiguration(environment: ["TOUCHSTONE_PASSKEY_HINTS": "security-key, hybrid"]).passkeys.hints == ["security-key", "hybrid"])
    }
}
