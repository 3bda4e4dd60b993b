import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneMail
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// Email verification, password reset and sign-in by mailed code (issue #33), through the server with the mails kept
/// in a ``TestMailbox``.
struct RecoveryTests {
    static func run(
        _ customize: (inout TouchstoneConfiguration) -> Void = { _ in },
        clock: ManualClock = ManualClock(),
        _ body: @Sendable (Flow, TestMailbox, ManualClock) async throws -> Void
    ) async throws {
        let mailbox = TestMailbox()
        try await TestServer.run(configuration: TestServer.configuration(customize), clock: clock, mailbox: mailbox) { client in
            try await body(Flow(client: client), mailbox, clock)
        }
    }

    // MARK: Email verification

    @Test func signUpMailsACodeThatVerifiesTheAddressOnce() async throws {
        try await Self.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let me = try await flow.client.request(.get, "/v1/session", token: account.token)
            #expect(me.any(["user", "emailVerified"]) as? Bool == false)
            let mail = try await mailbox.waitForMail(to: account.email, kind: "verify_email")
            #expect(mail.subject == "Confirm your email address for Touchstone")
            #expect(mail.from == "no-reply@localhost")
            let code = try #require(mail.code)
            #expect(mail.token("verify-email") != nil)
            let confirmed = try await flow.client.request(.post, "/v1/email/verification/confirm", token: account.token, json: ["code": code])
            #expect(confirmed.status == .ok)
            #expect(confirmed.any(["user", "emailVerified"]) as? Bool == true)
            let again = try await flow.client.request(.post, "/v1/email/verification/confirm", token: account.token, json: ["code": code])
            #expect(again.status == .conflict && again.errorCode == "email_already_verified")
            let resend = try await flow.client.request(.post, "/v1/email/verification", token: account.token)
            #expect(resend.errorCode == "email_already_verified")
            let events = try await flow.events(account.token)
            #expect(events.contains { $0["type"] as? String == "email.verified" })
        }
    }

    @Test func theLinkVerifiesWithoutASessionAndAResendReplacesTheCode() async throws {
        try await Self.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let first = try await mailbox.waitForMail(to: account.email, kind: "verify_email")
            let resend = try await flow.client.request(.post, "/v1/email/verification", token: account.token)
            #expect(resend.status == .accepted && resend.value("status") == "queued")
            let second = try await mailbox.waitForMail(to: account.email, kind: "verify_email", count: 2)
            // The first mail's code and link stopped working.
            let old = try await flow.client.request(.post, "/v1/email/verification/confirm", json: ["token": try #require(first.token("verify-email"))])
            #expect(old.status == .badRequest && old.errorCode == "invalid_code")
            let token = try #require(second.token("verify-email"))
            let confirmed = try await flow.client.request(.post, "/v1/email/verification/confirm", json: ["token": token])
            #expect(confirmed.status == .ok && confirmed.any(["user", "emailVerified"]) as? Bool == true)
            let replayed = try await flow.client.request(.post, "/v1/email/verification/confirm", json: ["token": token])
            #expect(replayed.errorCode == "invalid_code")
        }
    }

    @Test func fiveWrongCodesKillTheChallengeAndMalformedOnesDoNotCount() async throws {
        try await Self.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let code = try #require(try await mailbox.waitForMail(to: account.email, kind: "verify_email").code)
            let wrong = code == "000000" ? "111111" : "000000"
            for malformed in ["12345", "1234567", "abcdef", "12 34 56", "１２３４５６", ""] {
                let response = try await flow.client.request(.post, "/v1/email/verification/confirm", token: account.token, json: ["code": malformed])
                #expect(response.status == .badRequest && response.errorCode == "invalid_request", "\(malformed)")
            }
            for _ in 1...4 {
                let response = try await flow.client.request(.post, "/v1/email/verification/confirm", token: account.token, json: ["code": wrong])
                #expect(response.errorCode == "invalid_code")
            }
            // Four wrong codes and six malformed ones: the right code still works ("123 456" is forgiven).
            let spaced = "\(code.prefix(3)) \(code.suffix(3))"
            let confirmed = try await flow.client.request(.post, "/v1/email/verification/confirm", token: account.token, json: ["code": spaced])
            #expect(confirmed.status == .ok)

            let other = try await flow.signUp()
            let otherCode = try #require(try await mailbox.waitForMail(to: other.email, kind: "verify_email").code)
            for _ in 1...5 {
                _ = try await flow.client.request(.post, "/v1/email/verification/confirm", token: other.token, json: ["code": otherCode == "000000" ? "111111" : "000000"])
            }
            let killed = try await flow.client.request(.post, "/v1/email/verification/confirm", token: other.token, json: ["code": otherCode])
            #expect(killed.errorCode == "invalid_code")
        }
    }

    @Test func codesExpire() async throws {
        try await Self.run({ $0.recovery.verificationTTL = 600 }) { flow, mailbox, clock in
            let account = try await flow.signUp()
            let code = try #require(try await mailbox.waitForMail(to: account.email, kind: "verify_email").code)
            #expect(try await mailbox.waitForMail(to: account.email, kind: "verify_email").text.contains("work for 10 minutes"))
            clock.advance(by: 601)
            let token = try await flow.signIn(account.email)
            let late = try await flow.client.request(.post, "/v1/email/verification/confirm", token: token, json: ["code": code])
            #expect(late.errorCode == "invalid_code")
        }
    }

    @Test func enrolmentWaitsForAVerifiedAddressWhenRequired() async throws {
        try await Self.run({ $0.recovery.requireVerifiedEmail = true }) { flow, mailbox, _ in
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let refused = try await flow.startRegistration(account.token, device)
            #expect(refused.status == .forbidden && refused.errorCode == "email_not_verified")
            let passkey = try await flow.client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            #expect(passkey.errorCode == "email_not_verified")
            let code = try #require(try await mailbox.waitForMail(to: account.email, kind: "verify_email").code)
            _ = try await flow.client.request(.post, "/v1/email/verification/confirm", token: account.token, json: ["code": code])
            _ = try await flow.enroll(account.token, device)
        }
    }

    // MARK: Password reset

    @Test func aResetAnswersTheSameForKnownAndUnknownAddressesAndMailsOnlyTheKnown() async throws {
        try await Self.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let known = try await flow.client.request(.post, "/v1/password-resets", json: ["email": account.email])
            let unknown = try await flow.client.request(.post, "/v1/password-resets", json: ["email": "nobody@example.com"])
            #expect(known.status == .accepted && unknown.status == .accepted)
            #expect(known.body == unknown.body)
            let mail = try await mailbox.waitForMail(to: account.email, kind: "password_reset")
            #expect(mail.subject == "Reset your Touchstone password")
            #expect(mailbox.mails(to: "nobody@example.com").isEmpty)
            #expect(mail.text.contains("work for 15 minutes"))
        }
    }

    @Test func aResetByCodeSetsThePasswordEndsEverySessionAndSignsInAnAccountWithoutKeys() async throws {
        try await Self.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let other = try await flow.signIn(account.email)
            _ = try await flow.client.request(.post, "/v1/password-resets", json: ["email": account.email])
            let code = try #require(try await mailbox.waitForMail(to: account.email, kind: "password_reset").code)
            let newPassword = "a new passphrase 42"
            let reset = try await flow.client.request(
                .post, "/v1/password-resets/confirm", json: ["email": account.email, "code": code, "newPassword": newPassword])
            #expect(reset.status == .ok)
            #expect(reset.any(["revokedSessions"]) as? Int == 2)
            #expect(reset.any(["user", "emailVerified"]) as? Bool == true)
            let session = try #require(reset.value("session", "token"))
            #expect(try await flow.client.request(.get, "/v1/session", token: session).status == .ok)
            for token in [account.token, other] {
                #expect(try await flow.client.request(.get, "/v1/session", token: token).status == .unauthorized)
            }
            let oldPassword = try await flow.client.request(.post, "/v1/sessions", json: ["email": account.email, "password": Flow.password])
            #expect(oldPassword.errorCode == "invalid_credentials")
            let newSignIn = try await flow.client.request(.post, "/v1/sessions", json: ["email": account.email, "password": newPassword])
            #expect(newSignIn.status == .ok)
            let notice = try await mailbox.waitForMail(to: account.email, kind: "password_changed")
            #expect(notice.subject == "Your Touchstone password was changed")
            let replay = try await flow.client.request(
                .post, "/v1/password-resets/confirm", json: ["email": account.email, "code": code, "newPassword": "yet another one 43"])
            #expect(replay.errorCode == "invalid_code")
            let events = try await flow.events(session)
            #expect(events.contains { $0["type"] as? String == "password.reset" })
            #expect(events.contains { $0["type"] as? String == "password.reset_requested" })
        }
    }

    @Test func aResetByLinkDoesNotSignInAnAccountWithADeviceKey() async throws {
        try await Self.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            _ = try await flow.enroll(account.token, TestDeviceKey(.es256))
            _ = try await flow.client.request(.post, "/v1/password-resets", json: ["email": account.email])
            let first = try await mailbox.waitForMail(to: account.email, kind: "password_reset")
            // A new reset replaces the previous one.
            _ = try await flow.client.request(.post, "/v1/password-resets", json: ["email": account.email])
            let second = try await mailbox.waitForMail(to: account.email, kind: "password_reset", count: 2)
            let stale = try await flow.client.request(
                .post, "/v1/password-resets/confirm", json: ["token": try #require(first.token("reset-password")), "newPassword": "a new passphrase 42"])
            #expect(stale.errorCode == "invalid_code")
            let reset = try await flow.client.request(
                .post, "/v1/password-resets/confirm", json: ["token": try #require(second.token("reset-password")), "newPassword": "a new passphrase 42"])
            #expect(reset.status == .ok)
            #expect(reset.any(["session"]) == nil)
            #expect(try await flow.client.request(.get, "/v1/session", token: account.token).status == .unauthorized)
        }
    }

    @Test(arguments: [
        ["email": "a@example.com", "newPassword": "a new passphrase 42"],
        ["token": String(repeating: "A", count: 43), "email": "a@example.com", "code": "123456", "newPassword": "a new passphrase 42"],
        ["email": "a@example.com", "code": "123456"],
        ["email": "a@example.com", "code": "123456", "newPassword": "short"],
        ["token": "not a token", "newPassword": "a new passphrase 42"],
        ["email": "not an address", "code": "123456", "newPassword": "a new passphrase 42"],
    ])
    func malformedResetsAreRefused(_ body: [String: String]) async throws {
        try await Self.run { flow, _, _ in
            let response = try await flow.client.request(.post, "/v1/password-resets/confirm", json: body)
            #expect(response.status == .badRequest && response.errorCode == "invalid_request")
        }
    }

    @Test func aWrongResetCodeForAnUnknownAddressIsTheSameAnswer() async throws {
        try await Self.run { flow, _, _ in
            let response = try await flow.client.request(
                .post, "/v1/password-resets/confirm", json: ["email": "nobody@example.com", "code": "123456", "newPassword": "a new passphrase 42"])
            #expect(response.status == .badRequest && response.errorCode == "invalid_code")
        }
    }

    // MARK: Sign-in codes

    @Test func anEmailCodeSignsInWithAWeakSession() async throws {
        try await Self.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let unknown = try await flow.client.request(.post, "/v1/email-codes", json: ["email": "nobody@example.com"])
            let known = try await flow.client.request(.post, "/v1/email-codes", json: ["email": account.email])
            #expect(known.status == .accepted && known.body == unknown.body)
            let mail = try await mailbox.waitForMail(to: account.email, kind: "sign_in_code")
            #expect(mail.subject == "Your Touchstone sign-in code")
            let signedIn = try await flow.client.request(.post, "/v1/email-codes/verify", json: ["email": account.email, "code": try #require(mail.code)])
            #expect(signedIn.status == .ok)
            #expect(signedIn.any(["session", "methods"]) as? [String] == ["email_code"])
            #expect(signedIn.any(["user", "emailVerified"]) as? Bool == true)
            let token = try #require(signedIn.value("session", "token"))
            // Like a recovery code's session: one enrolment within 10 minutes, nothing else privileged.
            let change = try await flow.client.request(.put, "/v1/session/password", token: token, json: ["newPassword": "a new passphrase 42"])
            #expect(change.errorCode == "reauthentication_required")
            let replay = try await flow.client.request(.post, "/v1/email-codes/verify", json: ["email": account.email, "code": try #require(mail.code)])
            #expect(replay.status == .badRequest && replay.errorCode == "invalid_code")
            let nobody = try await flow.client.request(.post, "/v1/email-codes/verify", json: ["email": "nobody@example.com", "code": "123456"])
            #expect(nobody.errorCode == "invalid_code")
            let events = try await flow.events(token)
            #expect(events.contains { $0["type"] as? String == "email_code_login" && $0["outcome"] as? String == "success" })
        }
    }

    @Test func emailCodesCanBeTurnedOff() async throws {
        try await Self.run({ $0.recovery.emailCodes = false }) { flow, _, _ in
            let request = try await flow.client.request(.post, "/v1/email-codes", json: ["email": "a@example.com"])
            #expect(request.status == .forbidden && request.errorCode == "email_codes_disabled")
            let verify = try await flow.client.request(.post, "/v1/email-codes/verify", json: ["email": "a@example.com", "code": "123456"])
            #expect(verify.errorCode == "email_codes_disabled")
        }
    }

    // MARK: Limits and delivery

    @Test func fiveMailsPerAddressAndHourForKnownAndUnknownAddressesAlike() async throws {
        try await Self.run({ $0.rateLimits.enabled = true }) { flow, mailbox, clock in
            let account = try await flow.signUp()  // its verification mail is the first of five
            _ = try await mailbox.waitForMail(to: account.email, kind: "verify_email")
            for route in ["/v1/password-resets", "/v1/email-codes", "/v1/password-resets", "/v1/email-codes"] {
                #expect(try await flow.client.request(.post, route, json: ["email": account.email]).status == .accepted)
            }
            let sixth = try await flow.client.request(.post, "/v1/password-resets", json: ["email": account.email])
            #expect(sixth.status == .tooManyRequests && sixth.errorCode == "rate_limited")
            for _ in 1...5 {
                #expect(try await flow.client.request(.post, "/v1/email-codes", json: ["email": "nobody@example.com"]).status == .accepted)
            }
            let unknownSixth = try await flow.client.request(.post, "/v1/email-codes", json: ["email": "nobody@example.com"])
            // The same answer (only the wait it names differs with when the tokens were taken).
            #expect(unknownSixth.status == .tooManyRequests && unknownSixth.errorCode == sixth.errorCode)
            // One mail back every 12 minutes.
            clock.advance(by: 721)
            #expect(try await flow.client.request(.post, "/v1/password-resets", json: ["email": account.email]).status == .accepted)
        }
    }

    @Test func aMailThatFailsIsTriedAgainLater() async throws {
        try await Self.run { flow, mailbox, clock in
            mailbox.fail(next: 1, with: SMTPServerDown())
            let account = try await flow.signUp()
            // The sender tried and failed; 30 seconds later (by the server's clock) it tries again.
            try await mailbox.waitForAttempts(1)
            #expect(mailbox.mails(to: account.email).isEmpty)
            clock.advance(by: 31)
            _ = try await mailbox.waitForMail(to: account.email, kind: "verify_email")
        }
    }

    struct SMTPServerDown: Error {}
}
