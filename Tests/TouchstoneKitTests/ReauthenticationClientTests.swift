import Foundation
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// The SDK's re-authentication (issue #42) against the real server, in process: a stale or PIN session made fresh by
/// the device key, a passkey or the password, so privileged acts work again.
struct ReauthenticationClientTests {
    @Test func theDeviceKeyMakesAPinSessionFreshForPrivilegedActs() async throws {
        try await TestServer.run { client in
            let phone = BiometricLoginTests.Phone(client: client)
            let account = try await phone.signUp()
            _ = try await phone.login.enable(session: account)
            _ = try await phone.login.setPin("482613", session: account)
            let pinSession = try await phone.login.loginWithPin("482613")
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "reauthentication_required")) {
                _ = try await phone.login.client.passkeyRegistrationOptions(token: pinSession.session.token)
            }
            let fresh = try await phone.login.reauthenticate(session: pinSession, reason: "Confirm it's you")
            #expect(fresh.session.token == pinSession.session.token)
            #expect(fresh.session.methods == ["biometric"])
            _ = try await phone.login.client.passkeyRegistrationOptions(token: fresh.session.token)
        }
    }

    @Test func thePasswordAndAPasskeyMakeAStaleSessionFresh() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: PasskeyLoginTests.configuration, clock: clock) { client in
            let (passkeys, _) = PasskeyLoginTests.phone(client)
            let account = try await passkeys.client.createUser(email: "again@example.com", password: BiometricLoginTests.password)
            _ = try await passkeys.register(session: account)
            clock.advance(by: 11 * 60)
            _ = try await passkeys.client.currentSession(token: account.session.token)
            await #expect(throws: PasskeyError(.server, "", serverCode: "reauthentication_required")) { try await passkeys.register(session: account) }
            let byPasskey = try await passkeys.reauthenticate(session: account)
            #expect(byPasskey.session.methods == ["passkey"])
            _ = try await passkeys.client.passkeyRegistrationOptions(token: byPasskey.session.token)
            clock.advance(by: 11 * 60)
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "invalid_credentials")) {
                _ = try await passkeys.client.reauthenticate(password: "not the password", token: account.session.token)
            }
            let byPassword = try await passkeys.client.reauthenticate(password: BiometricLoginTests.password, token: account.session.token)
            #expect(byPassword.methods == ["password"])
            _ = try await passkeys.client.passkeyRegistrationOptions(token: account.session.token)
        }
    }
}
