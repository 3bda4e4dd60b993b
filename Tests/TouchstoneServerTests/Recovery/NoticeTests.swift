import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// The notices mailed to an account's address (issue #33): a new device, a password change, lockouts. Each is queued
/// with the audit event of the change, in its transaction.
struct NoticeTests {
    @Test func aNewDeviceAndAPasswordChangeAreMailed() async throws {
        try await RecoveryTests.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            _ = try await flow.enroll(account.token, TestDeviceKey(.es256))
            let enrolled = try await mailbox.waitForMail(to: account.email, kind: "device_enrolled")
            #expect(enrolled.subject == "A new device can sign in to your Touchstone account")
            let changed = try await flow.client.request(.put, "/v1/session/password", token: account.token, json: ["newPassword": "a new passphrase 42"])
            #expect(changed.status == .ok)
            let notice = try await mailbox.waitForMail(to: account.email, kind: "password_changed")
            #expect(notice.text.contains("was changed at"))
        }
    }

    @Test func aNewPasskeyIsMailed() async throws {
        try await RecoveryTests.run({ $0.passkeys.rpId = "app.example"; $0.passkeys.origins = [PasskeyTests.origin] }) { flow, mailbox, _ in
            let account = try await flow.signUp()
            let registered = try await AuthenticatorMetadataTests.register(flow.client, token: account.token, issuer: nil)
            #expect(registered.status == .created)
            let mail = try await mailbox.waitForMail(to: account.email, kind: "passkey_added")
            #expect(mail.subject == "A passkey was added to your Touchstone account")
        }
    }

    @Test func aDeviceLockoutIsMailedOnceWhenItLocks() async throws {
        try await RecoveryTests.run({ $0.lockoutThreshold = 3 }) { flow, mailbox, _ in
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            for _ in 0..<3 {
                let challenge = try await flow.challenge(id)
                _ = try await flow.finishLogin(id, challenge: challenge, signature: TestDeviceKey(.es256).signed(challenge))
            }
            let mail = try await mailbox.waitForMail(to: account.email, kind: "lockout")
            #expect(mail.subject == "Sign-in to your Touchstone account was locked")
            #expect(mail.text.contains("biometric sign-in on a device"))
            #expect(mailbox.mails(to: account.email, kind: "lockout").count == 1)
        }
    }

    @Test func aWrongPinThatDisablesThePinIsMailed() async throws {
        try await RecoveryTests.run({ $0.pinMaxAttempts = 2 }) { flow, mailbox, _ in
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            #expect(try await flow.setPin(account.token, id, "4821").status == .ok)
            for _ in 0..<2 { _ = try await flow.pinLogin(id, "0000") }
            let mail = try await mailbox.waitForMail(to: account.email, kind: "lockout")
            #expect(mail.text.contains("the app PIN of a device"))
        }
    }

    @Test func thePasswordThrottleIsMailedWhenItStarts() async throws {
        try await RecoveryTests.run({ $0.rateLimits.enabled = true; $0.rateLimits.loginFailureThreshold = 3 }) { flow, mailbox, _ in
            let account = try await flow.signUp()
            for _ in 0..<4 {
                _ = try await flow.client.request(.post, "/v1/sessions", json: ["email": account.email, "password": "not the password"])
            }
            let mail = try await mailbox.waitForMail(to: account.email, kind: "lockout")
            #expect(mail.text.contains("password sign-in"))
            #expect(mailbox.mails(to: account.email, kind: "lockout").count == 1)
            // An unknown address is throttled the same way and mails nobody.
            for _ in 0..<4 {
                _ = try await flow.client.request(.post, "/v1/sessions", json: ["email": "nobody@example.com", "password": "not the password"])
            }
            #expect(mailbox.mails(to: "nobody@example.com").isEmpty)
        }
    }
}
