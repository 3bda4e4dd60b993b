package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Test

/** The account as its owner's (issue #42): sessions, the data export and deletion, against the real server. */
class AccountTests {
    private val server = TestServer.shared

    @Test fun `sessions are listed and ended, the data exported, and the account deleted`() {
        val client = server.client()
        val first = server.newAccount(client)
        val email = first.user.email
        val second = blocking { client.signIn(email, TestServer.PASSWORD) }
        val third = blocking { client.signIn(email, TestServer.PASSWORD) }

        val sessions = blocking { client.sessions(first.session.token) }
        assertEquals(3, sessions.size)
        assertEquals(1, sessions.count { it.current })
        val other = sessions.first { !it.current }
        assertEquals("127.0.0.1", other.address)
        blocking { client.endSession(other.id, first.session.token) }
        assertEquals("session_not_found", expectFailure<TouchstoneException.Server> { client.endSession(other.id, first.session.token) }.serverCode)
        assertEquals(1, blocking { client.signOutOtherSessions(first.session.token) })
        for (ended in listOf(second, third)) {
            assertEquals(401, expectFailure<TouchstoneException.Server> { client.currentSession(ended.session.token) }.httpStatus)
        }

        val export = blocking { client.exportAccountData(first.session.token) }
        assertEquals(email, export.getJSONObject("user").getString("email"))
        assertFalse(export.toString().contains(first.session.token))

        assertEquals("email_mismatch", expectFailure<TouchstoneException.Server> { client.deleteAccount("someone@example.com", first.session.token) }.serverCode)
        blocking { client.deleteAccount(email, first.session.token) }
        val refused = expectFailure<TouchstoneException.Server> { client.signIn(email, TestServer.PASSWORD) }
        assertEquals("invalid_credentials", refused.serverCode)
        assertTrue(refused.httpStatus == 401)
    }

    @Test fun `a phone whose account was deleted forgets its enrolment at the next sign-in`() {
        val phone = server.phone()
        val account = server.newAccount(phone.client)
        blocking { phone.biometrics.enable(account) }
        blocking { phone.client.deleteAccount(account.user.email, account.session.token) }
        val error = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.signIn("Sign in") }
        assertEquals(TouchstoneErrorCode.REGISTRATION_REVOKED, error.code)
        assertTrue(phone.keyStore.tags.isEmpty())
        assertEquals(BiometricLogin.Status.NotEnabled, blocking { phone.biometrics.status() })
    }
}
