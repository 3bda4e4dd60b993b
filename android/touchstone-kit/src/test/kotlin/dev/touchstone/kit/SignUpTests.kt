package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test
import java.util.UUID

/** Sign-ups without a password (issue #42), against the real binary: a device key alone, a passkey alone. */
class SignUpTests {
    private val server = TestServer.shared

    @Test fun `a device-key sign-up needs no password and approves a sign-in request`() {
        val phone = server.phone()
        val email = "android-signup-${UUID.randomUUID().toString().take(8)}@example.com"
        val session = blocking { phone.biometrics.signUp(email, displayName = "Ana", deviceName = "Pixel") }
        assertEquals(email, session.user.email)
        assertEquals(false, session.user.hasPassword)
        assertEquals(listOf("biometric"), session.session.methods)
        assertEquals("Create your account", phone.verifier.prompts.last())
        // The key was attested with a sign-up challenge, and the registration says so.
        val registration = blocking { phone.client.registrations(session.session.token) }.single()
        assertEquals("tee", registration.keyAttestationLevel)
        assertTrue(blocking { phone.biometrics.status() } is BiometricLogin.Status.Enabled)
        assertEquals(session.user.id, blocking { phone.biometrics.signIn("Sign in") }.user.id)
        // The device credential was kept: a computer's sign-in request is approved from this phone.
        val browser = server.client()
        val started = blocking { browser.startSignInRequest(email = email) }
        val request = blocking { phone.biometrics.pendingSignInRequests() }.single()
        blocking { phone.biometrics.approveSignIn(request, started.number) }
        assertEquals(session.user.id, blocking { browser.signInRequestStatus(started.requestId, started.pollToken) }.session?.user?.id)
        // No password to sign in with; this phone and this address are taken.
        val password = expectFailure<TouchstoneException.Server> { phone.client.signIn(email, TestServer.PASSWORD) }
        assertEquals("invalid_credentials", password.serverCode)
        assertEquals(TouchstoneErrorCode.ENABLED_FOR_ANOTHER_ACCOUNT,
            expectFailure<TouchstoneException> { phone.biometrics.signUp("again-$email") }.code)
        val other = server.phone()
        assertEquals("email_taken", expectFailure<TouchstoneException.Server> { other.biometrics.signUp(email) }.serverCode)
        assertTrue("the refused sign-up's key is gone", other.keyStore.tags.isEmpty())
    }

    @Test fun `a passkey sign-up creates an account without a password`() {
        val passkeys = PasskeyLogin(server.client(), SoftwareAuthenticator())
        val email = "android-passkey-${UUID.randomUUID().toString().take(8)}@example.com"
        val session = blocking { passkeys.signUp(email, displayName = "Bo", name = "Pixel passkey") }
        assertEquals(false, session.user.hasPassword)
        assertEquals(listOf("passkey"), session.session.methods)
        assertEquals(session.user.id, blocking { passkeys.signIn() }.user.id)
    }
}
