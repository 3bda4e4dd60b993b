package dev.touchstone.kit

import java.io.File
import org.junit.Assert.assertEquals
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Test

/** Email verification and the ways back in, with the mails the server writes to its folder. */
class RecoveryTests {
    private val server = TestServer.shared
    private val mailbox = TestMailbox(File(server.directory, "mail"))

    @Test fun `the address is verified with the mailed code and a sign-in code opens an email_code session`() {
        val client = server.client()
        val account = server.newAccount(client)
        mailbox.latest(account.user.email, "verify-email")
        blocking { client.resendEmailVerification(account.session.token) }
        val verification = mailbox.latest(account.user.email, "verify-email", seen = 1)
        assertEquals(true, blocking { client.confirmEmailVerification(mailbox.code(verification), account.session.token) }.emailVerified)
        assertEquals("email_already_verified", expectFailure<TouchstoneException.Server> { client.resendEmailVerification(account.session.token) }.serverCode)

        blocking { client.requestEmailCode(account.user.email) }
        val mail = mailbox.latest(account.user.email, "sign in", seen = 0)
        val session = blocking { client.signInWithEmailCode(account.user.email, mailbox.code(mail)) }
        assertEquals(listOf("email_code"), session.session.methods)
    }

    @Test fun `a password reset by link signs in, and one for an account with a device key does not`() {
        val client = server.client()
        val account = server.newAccount(client)
        blocking { client.requestPasswordReset(account.user.email) }
        val mail = mailbox.latest(account.user.email, "reset-password")
        val reset = blocking { client.resetPassword(null, mailbox.token(mail, "reset-password"), "a new password 42") }
        assertNotNull(reset.signedIn)
        assertEquals(account.user.id, reset.user.id)
        assertTrue(reset.revokedSessions >= 1)
        assertEquals(TouchstoneErrorCode.SESSION_ENDED, expectFailure<TouchstoneException.Server> { client.issueAccessToken(account.session.token) }.code)

        val phone = server.phone()
        val other = server.newAccount(phone.client)
        blocking { phone.biometrics.enable(other) }
        blocking { client.requestPasswordReset(other.user.email) }
        val code = mailbox.code(mailbox.latest(other.user.email, "reset-password"))
        assertNull(blocking { client.resetPassword(other.user.email, code, "another new password") }.signedIn)
        blocking { client.signIn(other.user.email, "another new password") }
    }

    @Test fun `a recovery code signs in once and the address can be changed`() {
        val client = server.client()
        val account = server.newAccount(client)
        val codes = blocking { client.generateRecoveryCodes(account.session.token) }
        assertEquals(10, codes.size)
        val recovered = blocking { client.signInWithRecoveryCode(account.user.email, codes[3]) }
        assertEquals(listOf("recovery_code"), recovered.session.methods)
        expectFailure<TouchstoneException.Server> { client.signInWithRecoveryCode(account.user.email, codes[3]) }

        val newAddress = "moved-" + account.user.email
        blocking { client.requestEmailChange(newAddress, account.session.token) }
        val mail = mailbox.latest(newAddress, "change")
        assertEquals(newAddress, blocking { client.confirmEmailChange(mailbox.code(mail), account.session.token) }.email)
    }
}
