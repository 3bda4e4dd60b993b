import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting

/// Changing the account's address (issue #33): a fresh password or passkey, a code or link to the new address, a
/// notice to the old one, and the change only on confirmation.
struct EmailChangeTests {
    @Test func aCodeToTheNewAddressChangesItAndTheOldOneIsTold() async throws {
        try await RecoveryTests.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let other = try await flow.signUp()
            let taken = try await flow.client.request(.put, "/v1/session/email", token: account.token, json: ["email": other.email])
            #expect(taken.status == .conflict && taken.errorCode == "email_taken")
            let same = try await flow.client.request(.put, "/v1/session/email", token: account.token, json: ["email": account.email.lowercased()])
            #expect(same.status == .conflict && same.errorCode == "email_unchanged")

            let asked = try await flow.client.request(.put, "/v1/session/email", token: account.token, json: ["email": "new-address@example.com"])
            #expect(asked.status == .accepted)
            let notice = try await mailbox.waitForMail(to: account.email, kind: "email_change_notice")
            #expect(notice.text.contains("new-address@example.com"))
            let confirm = try await mailbox.waitForMail(to: "new-address@example.com", kind: "email_change")
            // Nothing changed yet.
            #expect(try await flow.client.request(.get, "/v1/session", token: account.token).value("user", "email") == account.email.lowercased())
            let changed = try await flow.client.request(
                .post, "/v1/session/email/confirm", token: account.token, json: ["code": try #require(confirm.code)])
            #expect(changed.status == .ok)
            #expect(changed.value("user", "email") == "new-address@example.com")
            #expect(changed.any(["user", "emailVerified"]) as? Bool == true)
            let oldSignIn = try await flow.client.request(.post, "/v1/sessions", json: ["email": account.email, "password": Flow.password])
            #expect(oldSignIn.errorCode == "invalid_credentials")
            _ = try await flow.signIn("new-address@example.com")
            let events = try await flow.events(account.token)
            #expect(events.contains { $0["type"] as? String == "email.changed" })
        }
    }

    @Test func theLinkChangesItWithoutASessionAndAStaleSessionCannotAsk() async throws {
        try await RecoveryTests.run { flow, mailbox, clock in
            let account = try await flow.signUp()
            _ = try await flow.client.request(.put, "/v1/session/email", token: account.token, json: ["email": "linked@example.com"])
            let token = try #require(try await mailbox.waitForMail(to: "linked@example.com", kind: "email_change").token("change-email"))
            let changed = try await flow.client.request(.post, "/v1/session/email/confirm", json: ["token": token])
            #expect(changed.status == .ok && changed.value("user", "email") == "linked@example.com")
            let replay = try await flow.client.request(.post, "/v1/session/email/confirm", json: ["token": token])
            #expect(replay.errorCode == "invalid_code")
            clock.advance(by: 11 * 60)
            let stale = try await flow.client.request(.put, "/v1/session/email", token: account.token, json: ["email": "later@example.com"])
            #expect(stale.status == .forbidden && stale.errorCode == "reauthentication_required")
        }
    }
}
