import Foundation
import HummingbirdTesting
import Testing
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// The SDK's email and recovery calls against the real server (in process), the mails read from a ``TestMailbox``.
struct RecoveryClientTests {
    @Test func verificationResetCodesAndRecoveryCodes() async throws {
        let mailbox = TestMailbox()
        try await TestServer.run(mailbox: mailbox) { client in
            let api = TouchstoneClient(transport: TestClientTransport(client))
            var email = "sdk-recovery@example.com"
            let signedUp = try await api.createUser(email: email, password: "correct horse battery")
            #expect(signedUp.user.emailVerified == false)

            // Verification: a resend replaces the sign-up's code; the new one verifies.
            _ = try await mailbox.waitForMail(to: email, kind: "verify_email")
            try await api.resendEmailVerification(token: signedUp.session.token)
            let code = try #require(try await mailbox.waitForMail(to: email, kind: "verify_email", count: 2).code)
            let verified = try await api.confirmEmailVerification(code: code, token: signedUp.session.token)
            #expect(verified.emailVerified == true)

            // A new address, confirmed with the code mailed to it.
            try await api.requestEmailChange(to: "sdk-recovery-2@example.com", token: signedUp.session.token)
            let changeCode = try #require(try await mailbox.waitForMail(to: "sdk-recovery-2@example.com", kind: "email_change").code)
            let changed = try await api.confirmEmailChange(code: changeCode, token: signedUp.session.token)
            #expect(changed.email == "sdk-recovery-2@example.com" && changed.emailVerified == true)
            email = changed.email

            // Recovery codes, then a sign-in with one.
            let codes = try await api.generateRecoveryCodes(token: signedUp.session.token)
            #expect(codes.count == 10)
            let recovered = try await api.signIn(email: email, recoveryCode: codes[3])
            #expect(recovered.session.methods == ["recovery_code"])

            // A sign-in code.
            try await api.requestEmailCode(email: email)
            let emailCode = try #require(try await mailbox.waitForMail(to: email, kind: "sign_in_code").code)
            let byCode = try await api.signIn(email: email, emailCode: emailCode)
            #expect(byCode.session.methods == ["email_code"])

            // "Forgot password?" by the link's token: every session ends, and an account without keys is signed in.
            try await api.requestPasswordReset(email: email)
            let link = try #require(try await mailbox.waitForMail(to: email, kind: "password_reset").token("reset-password"))
            let reset = try await api.resetPassword(linkToken: link, newPassword: "a new passphrase 42")
            #expect(reset.revokedSessions == 3)
            let session = try #require(reset.signedIn)
            #expect(try await api.currentSession(token: session.session.token).user.email == email)
            await #expect(throws: BiometricLoginError.self) { try await api.currentSession(token: signedUp.session.token) }

            // A wrong code is the server's `invalid_code`.
            let wrong = await #expect(throws: BiometricLoginError.self) { try await api.signIn(email: email, emailCode: "000000") }
            #expect(wrong?.serverCode == "invalid_code")
        }
    }
}
