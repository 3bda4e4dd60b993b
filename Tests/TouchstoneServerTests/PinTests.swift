import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// The app PIN: set with a recent password, used without a session, disabled by three wrong PINs until the next
/// password sign-in, never enough for privileged operations.
struct PinTests {
    @Test func aPinSignsInButIsNeverEnoughForPrivilegedOperations() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))

            let set = try await flow.setPin(account.token, id, "2468")
            #expect(set.status == .ok)
            #expect(set.value("registration", "pin") == "set")

            let login = try await flow.pinLogin(id, "2468")
            #expect(login.status == .ok)
            #expect(login.any(["session", "methods"]) as? [String] == ["pin"])
            let pinToken = try #require(login.value("session", "token"))
            #expect(try await client.request(.get, "/v1/session", token: pinToken).status == .ok)

            // Adding a device, setting a PIN and unlocking need the password, not the PIN.
            let start = try await flow.startRegistration(pinToken, TestDeviceKey(.es256))
            #expect(start.status == .forbidden)
            #expect(start.errorCode == "reauthentication_required")
            let reset = try await flow.setPin(pinToken, id, "1357")
            #expect(reset.errorCode == "reauthentication_required")
        }
    }

    @Test func threeWrongPinsDisableThePinUntilThePasswordIsUsed() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            _ = try await flow.setPin(account.token, id, "2468")

            for _ in 0..<3 {
                let wrong = try await flow.pinLogin(id, "0000")
                #expect(wrong.status == .unauthorized)
                #expect(wrong.errorCode == "invalid_pin")
            }
            // Disabled: even the right PIN is refused now.
            let disabled = try await flow.pinLogin(id, "2468")
            #expect(disabled.status.code == 423)
            #expect(disabled.errorCode == "pin_disabled")
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            #expect((list.json["registrations"] as? [[String: Any]])?.first?["pin"] as? String == "disabled")

            // The next password sign-in gives it back.
            _ = try await flow.signIn(account.email)
            #expect(try await flow.pinLogin(id, "2468").status == .ok)
        }
    }

    @Test func aRightPinResetsTheCount() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            _ = try await flow.setPin(account.token, id, "2468")
            for _ in 0..<2 { _ = try await flow.pinLogin(id, "0000") }
            #expect(try await flow.pinLogin(id, "2468").status == .ok)
            for _ in 0..<2 { #expect(try await flow.pinLogin(id, "0000").errorCode == "invalid_pin") }
            #expect(try await flow.pinLogin(id, "2468").status == .ok)
        }
    }

    @Test func concurrentGuessesNeverGetMoreThanThreeTries() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            _ = try await flow.setPin(account.token, id, "2468")
            let codes = try await withThrowingTaskGroup(of: String?.self) { group in
                for guess in 0..<12 {
                    group.addTask { try await flow.pinLogin(id, String(format: "%04d", 1000 + guess)).errorCode }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == "invalid_pin" }.count == 3)
            #expect(codes.filter { $0 == "pin_disabled" }.count == 9)
        }
    }

    @Test func errorsOfTheEndpoints() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)

            // No PIN yet.
            let notSet = try await flow.pinLogin(id, "2468")
            #expect(notSet.status == .conflict)
            #expect(notSet.errorCode == "pin_not_set")
            // Not 4 to 8 digits: refused before anything is counted or stored.
            for pin in ["123", "123456789", "12a4", "", "１２３４"] {
                let badSet = try await flow.setPin(account.token, id, pin)
                #expect(badSet.status == .badRequest, "\(pin)")
                #expect(badSet.errorCode == "invalid_request")
            }
            #expect(try await flow.pinLogin(id, "12a4").errorCode == "invalid_request")
            // Unknown registrations.
            #expect(try await flow.setPin(account.token, "nope", "2468").errorCode == "registration_not_found")
            #expect(try await flow.pinLogin("nope", "2468").errorCode == "registration_not_found")
            // Another user's registration is not found either.
            let other = try await flow.signUp()
            #expect(try await flow.setPin(other.token, id, "2468").errorCode == "registration_not_found")

            // Set, remove, removed.
            #expect(try await flow.setPin(account.token, id, "2468").status == .ok)
            let remove = try await client.request(.delete, "/v1/biometrics/registrations/\(id)/pin", token: account.token)
            #expect(remove.status == .noContent)
            let removeAgain = try await client.request(.delete, "/v1/biometrics/registrations/\(id)/pin", token: account.token)
            #expect(removeAgain.errorCode == "pin_not_set")
            #expect(try await flow.pinLogin(id, "2468").errorCode == "pin_not_set")

            // A stale password session cannot set a PIN.
            clock.advance(by: 11 * 60)
            let stale = try await flow.setPin(account.token, id, "2468")
            #expect(stale.errorCode == "reauthentication_required")

            // A revoked registration's PIN no longer works.
            let fresh = try await flow.signIn(account.email)
            #expect(try await flow.setPin(fresh, id, "2468").status == .ok)
            _ = try await client.request(.delete, "/v1/biometrics/registrations/\(id)", token: fresh)
            let revoked = try await flow.pinLogin(id, "2468")
            #expect(revoked.errorCode == "registration_revoked")
        }
    }

    @Test func aPinSessionCanBeShortenedButNotLengthened() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            _ = try await flow.setPin(account.token, id, "2468")
            func login(_ minutes: Int) async throws -> JSONTestResponse {
                try await client.request(
                    .post,
                    "/v1/pin/authentications",
                    json: ["registrationId": id, "pin": "2468", "sessionDurationMinutes": minutes]
                )
            }
            let zero = try await login(0)
            #expect(zero.errorCode == "invalid_request")
            // Refused before anything is counted or checked.
            let short = try await login(5)
            let long = try await login(100_000_000)
            func lifetime(_ response: JSONTestResponse) -> Int? {
                guard let start = response.value("session", "authenticatedAt"), let end = response.value("session", "expiresAt") else {
                    return nil
                }
                return AuditPagingDates.seconds(from: start, to: end)
            }
            #expect(lifetime(short) == 300)
            #expect(lifetime(long) == 30 * 24 * 3600)
        }
    }

    @Test func aLockedRegistrationRefusesItsPin() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.lockoutThreshold = 1 }) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            #expect(try await flow.setPin(account.token, id, "2468").status == .ok)
            let challenge = try await flow.challenge(id)
            _ = try await flow.finishLogin(id, challenge: challenge, signature: TestDeviceKey(.es256).signed(challenge))
            let locked = try await flow.pinLogin(id, "2468")
            #expect(locked.status.code == 423)
            #expect(locked.errorCode == "registration_locked")
            #expect(try await flow.setPin(account.token, id, "1357").errorCode == "registration_locked")
        }
    }
}

/// Changing the password: a recent password sign-in only; other sessions end.
struct PasswordChangeTests {
    @Test func aPinSessionNeverChangesThePassword() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            _ = try await flow.setPin(account.token, id, "2468")
            let pinToken = try #require(try await flow.pinLogin(id, "2468").value("session", "token"))
            let biometricToken = try #require(try await flow.login(id, device).value("session", "token"))

            // A PIN is never strong; a device key is (fresh strong authentication, issue #42).
            let refused = try await client.request(.put, "/v1/session/password", token: pinToken, json: ["newPassword": "a new password"])
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "reauthentication_required")
            _ = biometricToken
            let short = try await client.request(.put, "/v1/session/password", token: account.token, json: ["newPassword": "short"])
            #expect(short.errorCode == "invalid_request")

            let changed = try await client.request(.put, "/v1/session/password", token: account.token, json: ["newPassword": "a new password"])
            #expect(changed.status == .ok)
            #expect(changed.any(["revokedSessions"]) as? Int == 2)
            #expect(try await client.request(.get, "/v1/session", token: pinToken).status == .unauthorized)
            #expect(try await client.request(.get, "/v1/session", token: account.token).status == .ok)
            let old = try await client.request(.post, "/v1/sessions", json: ["email": account.email, "password": Flow.password])
            #expect(old.errorCode == "invalid_credentials")
            let new = try await client.request(.post, "/v1/sessions", json: ["email": account.email, "password": "a new password"])
            #expect(new.status == .ok)

            // Ten minutes later the same password session is no longer enough.
            clock.advance(by: 11 * 60)
            let stale = try await client.request(.put, "/v1/session/password", token: account.token, json: ["newPassword": "another one!"])
            #expect(stale.errorCode == "reauthentication_required")
            let events = try await flow.events(account.token)
            #expect(events.contains { $0["type"] as? String == "password.changed" })
        }
    }
}
