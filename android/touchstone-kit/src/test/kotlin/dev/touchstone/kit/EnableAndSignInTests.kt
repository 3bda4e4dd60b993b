package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertNotEquals
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Test

/** Enrolment with an attested key and device-key sign-in against the real server. */
class EnableAndSignInTests {
    private val server = TestServer.shared

    @Test fun `enable sends an attestation chain the server accepts and sign-in opens a biometric session`() {
        val phone = server.phone()
        val account = server.newAccount()
        val registration = blocking { phone.biometrics.enable(account, deviceName = "Pixel 9") }
        assertEquals("active", registration.status)
        assertEquals("ES256", registration.algorithm)
        assertEquals("the server recorded the Keystore attestation", "tee", registration.keyAttestationLevel)
        assertEquals(listOf("Enable biometric sign-in"), phone.verifier.prompts)
        assertEquals(listOf(KeyAccessPolicy.BIOMETRY_CURRENT_SET), phone.verifier.policies)

        val session = blocking { phone.biometrics.signIn(reason = "Sign in to Example") }
        assertEquals(account.user.id, session.user.id)
        assertEquals(listOf("biometric"), session.session.methods)
        assertEquals(account.user.id, blocking { phone.client.currentSession(session.session.token) }.user.id)
        val status = blocking { phone.biometrics.status() }
        assertTrue(status is BiometricLogin.Status.Enabled)
        assertEquals(registration.id, (status as BiometricLogin.Status.Enabled).enrollment.registrationId)
    }

    @Test fun `a StrongBox chain is recorded as strongbox`() {
        val phone = server.phone(keyStore = server.attestingKeyStore(TestAndroidKeystore.Key(securityLevel = 2)))
        val registration = blocking { phone.biometrics.enable(server.newAccount()) }
        assertEquals("strongbox", registration.keyAttestationLevel)
    }

    @Test fun `a chain the server refuses fails enrolment and deletes the new key`() {
        // A key usable without user authentication is what attestation exists to refuse.
        val phone = server.phone(keyStore = server.attestingKeyStore(TestAndroidKeystore.Key(noAuthRequired = true, userAuthType = null)))
        val error = expectFailure<TouchstoneException.Server> { phone.biometrics.enable(server.newAccount()) }
        assertEquals("invalid_key_attestation", error.serverCode)
        assertEquals(400, error.httpStatus)
        assertTrue("nothing left in the key store", phone.keyStore.tags.isEmpty())
        assertEquals(BiometricLogin.Status.NotEnabled, blocking { phone.biometrics.status() })
    }

    @Test fun `without attestation the server that requires it refuses enrolment`() {
        val phone = server.phone(keyStore = dev.touchstone.kit.software.SoftwareKeyStore())
        val error = expectFailure<TouchstoneException.Server> { phone.biometrics.enable(server.newAccount()) }
        assertEquals("android_key_attestation_required", error.serverCode)
    }

    @Test fun `a cancelled enrolment prompt leaves nothing behind`() {
        val phone = server.phone()
        phone.verifier.fail(TouchstoneException.Prompt(TouchstoneErrorCode.USER_CANCELLED, "cancelled"))
        val error = expectFailure<TouchstoneException.Prompt> { phone.biometrics.enable(server.newAccount()) }
        assertEquals(TouchstoneErrorCode.USER_CANCELLED, error.code)
        assertTrue(phone.keyStore.tags.isEmpty())
    }

    @Test fun `a cancelled sign-in prompt is USER_CANCELLED and keeps the enrolment`() {
        val phone = server.phone()
        blocking { phone.biometrics.enable(server.newAccount()) }
        phone.verifier.fail(TouchstoneException.Prompt(TouchstoneErrorCode.USER_CANCELLED, "cancelled"))
        val error = expectFailure<TouchstoneException.Prompt> { phone.biometrics.signIn("Sign in") }
        assertEquals(TouchstoneErrorCode.USER_CANCELLED, error.code)
        assertTrue(blocking { phone.biometrics.status() } is BiometricLogin.Status.Enabled)
        blocking { phone.biometrics.signIn("Sign in") }
    }

    @Test fun `a device without enrolled biometrics cannot enable`() {
        val phone = server.phone()
        phone.verifier.availability = BiometryAvailability.NotEnrolled
        val error = expectFailure<TouchstoneException.Device> { phone.biometrics.enable(server.newAccount()) }
        assertEquals(TouchstoneErrorCode.NOT_ENROLLED, error.code)
        assertEquals(BiometricLogin.Availability.DeviceUnavailable(BiometryAvailability.NotEnrolled), blocking { phone.biometrics.availability() })
        phone.verifier.availability = BiometryAvailability.LockedOut
        assertEquals(TouchstoneErrorCode.LOCKED_OUT, expectFailure<TouchstoneException.Device> { phone.biometrics.enable(server.newAccount()) }.code)
        phone.verifier.availability = BiometryAvailability.Available
        assertEquals(BiometricLogin.Availability.Available, blocking { phone.biometrics.availability() })
    }

    @Test fun `another account cannot enable on a phone enabled for someone`() {
        val phone = server.phone()
        blocking { phone.biometrics.enable(server.newAccount()) }
        val error = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.enable(server.newAccount()) }
        assertEquals(TouchstoneErrorCode.ENABLED_FOR_ANOTHER_ACCOUNT, error.code)
    }

    @Test fun `enabling again replaces the registration and deletes the old key`() {
        val phone = server.phone()
        val account = server.newAccount()
        val first = blocking { phone.biometrics.enable(account) }
        val firstTag = phone.keyStore.tags.single()
        val second = blocking { phone.biometrics.enable(account) }
        assertNotEquals(first.id, second.id)
        assertEquals(1, phone.keyStore.tags.size)
        assertTrue(firstTag !in phone.keyStore.tags)
        val statuses = blocking { phone.client.registrations(account.session.token) }.associate { it.id to it.status }
        assertEquals("replaced", statuses[first.id])
        assertEquals("active", statuses[second.id])
    }

    @Test fun `a PIN session enrols no device until the device key proves it again`() {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        blocking { phone.biometrics.setPin("4821", account) }
        val pinSession = blocking { phone.biometrics.signInWithPin("4821") }
        // The PIN session is bound to this phone's proof key (issue #43): the second enrolment goes through its client.
        val other = server.phone(client = phone.client)
        val error = expectFailure<TouchstoneException.Server> { other.biometrics.enable(pinSession) }
        assertEquals("reauthentication_required", error.serverCode)
        assertTrue(other.keyStore.tags.isEmpty())
        // A device key is a strong proof: after the prompt the same session enrols the second phone.
        val fresh = blocking { phone.biometrics.reauthenticate(pinSession, "Confirm it's you") }
        assertEquals(pinSession.session.token, fresh.session.token)
        assertEquals(listOf("biometric"), fresh.session.methods)
        blocking { other.biometrics.enable(fresh) }
        assertEquals(1, other.keyStore.tags.size)
        val wrong = expectFailure<TouchstoneException.Server> { phone.client.reauthenticate("not the password", pinSession.session.token) }
        assertEquals("invalid_credentials", wrong.serverCode)
        assertEquals(listOf("password"), blocking { phone.client.reauthenticate(TestServer.PASSWORD, pinSession.session.token) }.methods)
    }

    @Test fun `access tokens are cached until near expiry and end with the session`() {
        val phone = server.phone()
        val account = server.newAccount()
        val first = blocking { phone.client.accessToken(account) }
        assertEquals(first, blocking { phone.client.accessToken(account) })
        val token = blocking { phone.client.issueAccessToken(account.session.token) }
        assertTrue(token.expiresAtMillis > System.currentTimeMillis())
        assertEquals(3, token.token.split('.').size)
        blocking { phone.client.signOut(account.session.token) }
        val error = expectFailure<TouchstoneException.Server> { phone.client.issueAccessToken(account.session.token) }
        assertEquals(TouchstoneErrorCode.SESSION_ENDED, error.code)
        assertNull(error.cause)
    }
}
