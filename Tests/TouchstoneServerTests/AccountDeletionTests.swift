import Foundation
import HTTPTypes
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// `DELETE /v1/users/me` (issue #42): the owner deletes the account, typing its address again, after a fresh
/// password or passkey; everything goes at once, a goodbye mail is queued, and nothing signs in afterwards.
struct AccountDeletionTests {
    @Test func theOwnerDeletesTheAccountAndNothingSignsInAfterwards() async throws {
        try await RecoveryTests.run { flow, mailbox, _ in
            let client = flow.client
            let account = try await flow.signUp("leaving@example.com")
            let device = TestDeviceKey(.es256)
            let registrationId = try await flow.enroll(account.token, device)
            #expect(try await flow.setPin(account.token, registrationId, "2468").status == .ok)
            let other = try await flow.signIn("leaving@example.com")

            let deleted = try await client.request(.delete, "/v1/users/me", token: account.token, json: ["confirmEmail": "Leaving@Example.com"])
            #expect(deleted.status == .noContent)
            let goodbye = try await mailbox.waitForMail(to: "leaving@example.com", kind: "account_deleted")
            #expect(goodbye.subject?.contains("deleted") == true)

            for token in [account.token, other] {
                #expect(try await client.request(.get, "/v1/session", token: token).status == .unauthorized)
            }
            let again = try await client.request(.delete, "/v1/users/me", token: account.token, json: ["confirmEmail": "leaving@example.com"])
            #expect(again.status == .unauthorized)
            let password = try await client.request(.post, "/v1/sessions", json: ["email": "leaving@example.com", "password": Flow.password])
            #expect(password.errorCode == "invalid_credentials")
            let start = try await client.request(.post, "/v1/biometrics/authentications/start", json: ["registrationId": registrationId])
            #expect(start.errorCode == "registration_not_found")
            #expect(try await flow.pinLogin(registrationId, "2468").errorCode == "registration_not_found")
            // The address is free again.
            #expect(try await client.request(.post, "/v1/users", json: ["email": "leaving@example.com", "password": Flow.password]).status == .created)
        }
    }

    @Test func anotherAddressAMissingBodyOrAStaleOrWeakSessionDeleteNothing() async throws {
        let clock = ManualClock()
        try await RecoveryTests.run(clock: clock) { flow, _, clock in
            let client = flow.client
            let account = try await flow.signUp("staying@example.com")
            let wrong = try await client.request(.delete, "/v1/users/me", token: account.token, json: ["confirmEmail": "someone@example.com"])
            #expect(wrong.status == .badRequest && wrong.errorCode == "email_mismatch")
            let missing = try await client.request(.delete, "/v1/users/me", token: account.token)
            #expect(missing.status == .badRequest && missing.errorCode == "invalid_request")
            let malformed = try await client.request(.delete, "/v1/users/me", token: account.token, json: ["confirmEmail": "not an address"])
            #expect(malformed.errorCode == "invalid_request")

            // A PIN session is not enough (a password, a passkey or a device key is).
            let device = TestDeviceKey(.es256)
            let registrationId = try await flow.enroll(account.token, device)
            _ = try await flow.setPin(account.token, registrationId, "1357")
            let pinToken = try #require(try await flow.pinLogin(registrationId, "1357").value("session", "token"))
            let weak = try await client.request(.delete, "/v1/users/me", token: pinToken, json: ["confirmEmail": "staying@example.com"])
            #expect(weak.status == .forbidden && weak.errorCode == "reauthentication_required")
            // A password proven more than the window ago is not fresh.
            clock.advance(by: 11 * 60)
            let fresh = try await flow.signIn("staying@example.com")
            clock.advance(by: 11 * 60)
            let stale = try await client.request(.delete, "/v1/users/me", token: fresh, json: ["confirmEmail": "staying@example.com"])
            #expect(stale.status == .forbidden && stale.errorCode == "reauthentication_required")
            #expect(try await client.request(.delete, "/v1/users/me").status == .unauthorized)
            // Nothing was deleted.
            #expect(try await client.request(.post, "/v1/sessions", json: ["email": "staying@example.com", "password": Flow.password]).status == .ok)
        }
    }
}
