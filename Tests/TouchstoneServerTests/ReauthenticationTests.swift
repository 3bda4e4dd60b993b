import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// `POST /v1/session/reauthenticate` (issue #42): each proof makes a session fresh again, each bad proof is refused
/// with its code and leaves the session as it was.
struct ReauthenticationTests {
    typealias Kind = FreshAuthenticationTests.Kind

    static func fresh(_ setup: FreshAuthenticationTests.Setup, _ token: String) async throws -> Bool {
        !FreshAuthenticationTests.refused(try await setup.client.request(.get, "/v1/users/me/export", token: token))
    }

    @Test(arguments: NulInputTests.databases)
    func aPasswordMakesAStaleSessionFresh(database: NulInputTests.Database) async throws {
        try await FreshAuthenticationTests.withAccount(database) { setup, sessions, driver in
            let stale = try #require(sessions[.stalePassword])
            #expect(try await Self.fresh(setup, stale) == false)
            let wrong = try await driver.withPassword(stale, "not the password")
            #expect(wrong.status == .unauthorized && wrong.errorCode == "invalid_credentials")
            #expect(try await Self.fresh(setup, stale) == false)
            let done = try await driver.withPassword(stale)
            #expect(done.status == .ok)
            #expect(done.any(["session", "methods"]) as? [String] == ["password"])
            #expect(done.value("session", "token") == stale)
            #expect(try await Self.fresh(setup, stale))
            // The window runs again from the re-authentication.
            driver.clock.advance(by: 11 * 60)
            #expect(try await Self.fresh(setup, stale) == false)
        }
    }

    @Test(arguments: NulInputTests.databases)
    func aDeviceKeyMakesAPinSessionFresh(database: NulInputTests.Database) async throws {
        try await FreshAuthenticationTests.withAccount(database) { setup, sessions, driver in
            let pin = try #require(sessions[.pin])
            let started = try await driver.deviceKeyChallenge(pin)
            #expect(started.status == .ok && started.value("registrationId") == driver.registrationId)
            let challenge = try #require(started.value("challenge"))
            let done = try await driver.withDeviceKey(pin, challenge: challenge)
            #expect(done.status == .ok)
            #expect(done.any(["session", "methods"]) as? [String] == ["biometric"])
            #expect(try await Self.fresh(setup, pin))
            // Single use.
            let replay = try await driver.withDeviceKey(pin, challenge: challenge)
            #expect(replay.status == .unauthorized && replay.errorCode == "challenge_not_found")
        }
    }

    @Test func badDeviceKeyProofsAreRefused() async throws {
        try await FreshAuthenticationTests.withAccount(.sqlite) { setup, sessions, driver in
            let stale = try #require(sessions[.stalePassword])
            let other = try #require(sessions[.pin])
            // A challenge issued to another session.
            let foreign = try #require(try await driver.deviceKeyChallenge(other).value("challenge"))
            let crossed = try await driver.withDeviceKey(stale, challenge: foreign)
            #expect(crossed.status == .unauthorized && crossed.errorCode == "challenge_not_found")
            // A sign-in challenge is not a re-authentication challenge.
            let signIn = try await Flow(client: setup.client).challenge(driver.registrationId)
            #expect(try await driver.withDeviceKey(stale, challenge: signIn).errorCode == "challenge_not_found")
            // A wrong signature uses the challenge up.
            let challenge = try #require(try await driver.deviceKeyChallenge(stale).value("challenge"))
            let wrong = try await driver.withDeviceKey(stale, challenge: challenge, key: TestDeviceKey(.es256))
            #expect(wrong.status == .unauthorized && wrong.errorCode == "invalid_signature")
            #expect(try await driver.withDeviceKey(stale, challenge: challenge).errorCode == "challenge_not_found")
            // Expired.
            let late = try #require(try await driver.deviceKeyChallenge(stale).value("challenge"))
            driver.clock.advance(by: 121)
            #expect(try await driver.withDeviceKey(stale, challenge: late).errorCode == "challenge_expired")
            // Another account's registration, or none.
            let unknown = try await driver.deviceKeyChallenge(stale, registrationId: "no-such-registration")
            #expect(unknown.status == .notFound && unknown.errorCode == "registration_not_found")
            #expect(try await Self.fresh(setup, stale) == false)
        }
    }

    /// Wrong re-authentication signatures count toward the device key's lockout, as at sign-in; a locked or revoked
    /// key gets no challenge.
    @Test func wrongSignaturesLockTheDeviceKeyAndARevokedOneIsRefused() async throws {
        try await FreshAuthenticationTests.withAccount(.sqlite) { setup, sessions, driver in
            let stale = try #require(sessions[.stalePassword])
            for _ in 0..<5 {
                let challenge = try #require(try await driver.deviceKeyChallenge(stale).value("challenge"))
                #expect(try await driver.withDeviceKey(stale, challenge: challenge, key: TestDeviceKey(.es256)).errorCode == "invalid_signature")
            }
            let locked = try await driver.deviceKeyChallenge(stale)
            #expect(locked.status.code == 423 && locked.errorCode == "registration_locked")
            let fresh = try #require(sessions[.password])
            #expect(try await setup.client.request(.delete, "/v1/biometrics/registrations/\(driver.registrationId)", token: fresh).status == .noContent)
            let revoked = try await driver.deviceKeyChallenge(stale)
            #expect(revoked.status == .unauthorized && revoked.errorCode == "registration_revoked")
        }
    }

    @Test(arguments: NulInputTests.databases)
    func aPasskeyWithUserVerificationMakesASessionFresh(database: NulInputTests.Database) async throws {
        try await Self.withPasskeyAccount(database) { client, token, credential, clock in
            var credential = credential
            var authenticator = VirtualAuthenticator()
            clock.advance(by: 11 * 60)
            let options = try await client.request(.post, "/v1/session/reauthenticate/passkey-options", token: token)
            #expect(options.status == .ok)
            #expect(options.value("userVerification") == "required")
            #expect((options.any(["allowCredentials"]) as? [[String: Any]])?.count == 1)
            // Without user verification: refused, and the challenge is not used up by it.
            authenticator.flags.remove(.userVerified)
            let unverified = try authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
            let refused = try await Self.reauthenticate(client, token, passkey: unverified)
            #expect(refused.status == .unauthorized && refused.errorCode == "invalid_passkey_assertion")
            authenticator.flags.insert(.userVerified)
            let verified = try authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
            let done = try await Self.reauthenticate(client, token, passkey: verified)
            #expect(done.status == .ok)
            #expect(done.any(["session", "methods"]) as? [String] == ["passkey"])
            #expect(try await client.request(.get, "/v1/users/me/export", token: token).status == .ok)
            let replay = try await Self.reauthenticate(client, token, passkey: verified)
            #expect(replay.errorCode == "challenge_not_found")
            // Options for one session do not serve another.
            let other = try await Flow(client: client).signIn("passkey-reauth@example.com")
            let foreign = try await client.request(.post, "/v1/session/reauthenticate/passkey-options", token: other)
            let answer = try authenticator.respond(toRequestOptions: Array(foreign.body), credential: &credential, origin: PasskeyTests.origin)
            #expect(try await Self.reauthenticate(client, token, passkey: answer).errorCode == "challenge_not_found")
        }
    }

    @Test func anAccountWithoutPasskeysGetsNoOptionsAndABodyNeedsOneProof() async throws {
        try await TestServer.run { client in
            let account = try await Flow(client: client).signUp()
            let options = try await client.request(.post, "/v1/session/reauthenticate/passkey-options", token: account.token)
            #expect(options.status == .conflict && options.errorCode == "no_passkeys")
            let none = try await client.request(.post, "/v1/session/reauthenticate", token: account.token, json: [:])
            #expect(none.status == .badRequest && none.errorCode == "invalid_request")
            let two = try await client.request(
                .post, "/v1/session/reauthenticate", token: account.token,
                json: ["password": Flow.password, "deviceKey": ["registrationId": "r", "challenge": "c", "signature": "AA"]])
            #expect(two.status == .badRequest && two.errorCode == "invalid_request")
            let anonymous = try await client.request(.post, "/v1/session/reauthenticate", json: ["password": Flow.password])
            #expect(anonymous.status == .unauthorized)
        }
    }

    // MARK: Helpers

    static func reauthenticate(_ client: any TestClientProtocol, _ token: String, passkey response: [UInt8]) async throws -> JSONTestResponse {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any])
        let body = try JSONSerialization.data(withJSONObject: ["passkey": object])
        return try await client.request(.post, "/v1/session/reauthenticate", token: token, raw: String(decoding: body, as: UTF8.self))
    }

    /// An account with one passkey and a session of that passkey's.
    static func withPasskeyAccount(
        _ database: NulInputTests.Database,
        _ body: @Sendable (any TestClientProtocol, String, VirtualAuthenticator.Credential, ManualClock) async throws -> Void
    ) async throws {
        try await NulInputTests.withStore(database) { store in
            let clock = ManualClock()
            let configuration = PasskeyTests.configuration { $0.sessionIdleTimeout = .seconds(3600) }
            try await TestServer.run(configuration: configuration, clock: clock, store: store) { client in
                let account = try await Flow(client: client).signUp("passkey-reauth@example.com")
                var browser = PasskeyTests.Browser(client: client)
                var (credential, registered) = try await browser.register(account.token)
                #expect(registered.status == .created)
                let token = try #require(try await browser.signIn(&credential).value("session", "token"))
                browser.authenticator = VirtualAuthenticator()
                try await body(client, token, credential, clock)
            }
        }
    }
}
