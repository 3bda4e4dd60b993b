import Foundation
import HTTPTypes
import Testing
import TouchstoneServer
import TouchstoneTesting

/// `TOUCHSTONE_SIGN_UP` (issue #42): an organisation that provisions its users itself turns sign-up off.
struct SignUpSwitchTests {
    @Test func offRefusesSignUpBeforeReadingTheBodyAndHidesThePagesSignUp() async throws {
        let configuration = TestServer.configuration { $0.accounts.signUp = false }
        try await TestServer.run(configuration: configuration) { client in
            for body in [["email": "new@example.com", "password": "correct horse battery"], ["nonsense": "x"]] {
                let refused = try await client.request(.post, "/v1/users", json: body)
                #expect(refused.status == .forbidden)
                #expect(refused.errorCode == "sign_up_disabled")
            }
            // Every sign-up route: with a passkey too.
            for path in [
                "/v1/passkeys/sign-ups/options", "/v1/passkeys/sign-ups/verify", "/v1/biometrics/sign-ups/start", "/v1/biometrics/sign-ups/finish",
                "/v1/android-key-attestation/sign-up-challenges",
            ] {
                let refused = try await client.request(.post, path, json: ["email": "new@example.com"])
                #expect(refused.status == .forbidden && refused.errorCode == "sign_up_disabled", "\(path)")
            }
            let config = try await client.request(.get, "/v1/config")
            #expect((config.json["signUp"] as? [String: Any])?["enabled"] as? Bool == false)
            let page = String(decoding: try await client.request(.get, "/").body, as: UTF8.self)
            #expect(page.contains(#"<div class="card" id="sign-up-card" hidden>"#))
            // Nobody was created: the address is not taken, and signing in with it fails as for any unknown address.
            let signIn = try await client.request(.post, "/v1/sessions", json: ["email": "new@example.com", "password": "correct horse battery"])
            #expect(signIn.errorCode == "invalid_credentials")
        }
    }

    @Test func onByDefault() async throws {
        #expect(TouchstoneConfiguration().accounts.signUp)
        try await TestServer.run { client in
            let config = try await client.request(.get, "/v1/config")
            #expect((config.json["signUp"] as? [String: Any])?["enabled"] as? Bool == true)
            let page = String(decoding: try await client.request(.get, "/").body, as: UTF8.self)
            #expect(page.contains(#"<div class="card" id="sign-up-card">"#))
            #expect(try await client.request(.post, "/v1/users", json: ["email": "new@example.com", "password": "correct horse battery"]).status == .created)
        }
    }

    @Test(arguments: [("off", false), ("OFF", false), ("false", false), ("on", true), ("true", true)])
    func theSettingIsRead(value: String, expected: Bool) throws {
        let configuration = try TouchstoneConfiguration(environment: ["TOUCHSTONE_SIGN_UP": value])
        #expect(configuration.accounts.signUp == expected)
    }

    @Test func aMisspelledValueStopsTheStart() {
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_SIGN_UP": "maybe"]) }
    }
}
