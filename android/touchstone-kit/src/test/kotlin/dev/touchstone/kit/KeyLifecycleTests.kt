package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/** Revocation, biometric change, a vanished key, lockout, the device list, disable: each against the real server. */
class KeyLifecycleTests {
    private val server = TestServer.shared

    private fun enabledPhone(): Pair<TestServer.Phone, TouchstoneSession> {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account, deviceName = "Pixel") }
        return phone to account
    }

    @Test fun `a revoked registration deletes the local key and ids`() {
        val (phone, account) = enabledPhone()
        val registration = blocking { phone.client.registrations(account.session.token) }.single()
        assertEquals("Pixel", registration.deviceName)
        blocking { phone.client.deleteRegistration(account.session.token, registration.id) }
        val error = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.signIn("Sign in") }
        assertEquals(TouchstoneErrorCode.REGISTRATION_REVOKED, error.code)
        assertEquals("registration_revoked", error.serverCode)
        assertTrue(phone.keyStore.tags.isEmpty())
        assertEquals(BiometricLogin.Status.NotEnabled, blocking { phone.biometrics.status() })
        assertEquals(null, blocking { phone.state.loadDeviceCredential(registration.id) })
        val again = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.signIn("Sign in") }
        assertEquals(NotEnabledReason.NEVER_ENABLED, again.reason)
    }

    @Test fun `a biometric change invalidates the registration and asks for the password`() {
        val (phone, account) = enabledPhone()
        val tag = phone.keyStore.tags.single()
        phone.keyStore.invalidate(tag)
        val error = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.signIn("Sign in") }
        assertEquals(TouchstoneErrorCode.KEY_INVALIDATED, error.code)
        assertTrue("the key and the ids are gone", phone.keyStore.tags.isEmpty())
        assertEquals(BiometricLogin.Status.NotEnabled, blocking { phone.biometrics.status() })
        val registration = blocking { phone.client.registrations(account.session.token) }.single()
        assertEquals("the server was told (POST .../invalidate)", "invalidated", registration.status)
        // A password sign-in turns biometrics back on.
        val password = blocking { phone.client.signIn(account.user.email, TestServer.PASSWORD) }
        blocking { phone.biometrics.enable(password) }
        blocking { phone.biometrics.signIn("Sign in") }
    }

    @Test fun `a key that vanished from the Keystore is reported and forgotten`() {
        val (phone, account) = enabledPhone()
        phone.keyStore.lose(phone.keyStore.tags.single())
        val error = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.signIn("Sign in") }
        assertEquals(TouchstoneErrorCode.NOT_ENABLED, error.code)
        assertEquals(NotEnabledReason.KEY_LOST, error.reason)
        assertEquals(BiometricLogin.Status.NotEnabled, blocking { phone.biometrics.status() })
        assertEquals("invalidated", blocking { phone.client.registrations(account.session.token) }.single().status)
    }

    @Test fun `failed signatures lock the registration and a password session unlocks it`() {
        val (phone, account) = enabledPhone()
        val registrationId = blocking { phone.client.registrations(account.session.token) }.single().id
        repeat(5) {
            val grant = blocking { phone.client.startAuthentication(registrationId) }
            val error = expectFailure<TouchstoneException.Server> { phone.client.finishAuthentication(registrationId, grant.challenge, ByteArray(64) { 1 }) }
            assertEquals("invalid_signature", error.serverCode)
        }
        val locked = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.signIn("Sign in") }
        assertEquals(TouchstoneErrorCode.REGISTRATION_LOCKED, locked.code)
        assertTrue("a lock keeps the enrolment", blocking { phone.biometrics.status() } is BiometricLogin.Status.Enabled)
        assertEquals("active", blocking { phone.client.unlockRegistration(account.session.token, registrationId) }.status)
        blocking { phone.biometrics.signIn("Sign in") }
    }

    @Test fun `disable deletes the registration on the server and then the local state`() {
        val (phone, account) = enabledPhone()
        val registrationId = blocking { phone.client.registrations(account.session.token) }.single().id
        blocking { phone.biometrics.disable(account) }
        assertTrue(phone.keyStore.tags.isEmpty())
        assertEquals(BiometricLogin.Status.NotEnabled, blocking { phone.biometrics.status() })
        assertEquals("revoked", blocking { phone.client.registrations(account.session.token) }.single { it.id == registrationId }.status)
        val error = expectFailure<TouchstoneException.Enrollment> { phone.client.startAuthentication(registrationId) }
        assertEquals(TouchstoneErrorCode.REGISTRATION_REVOKED, error.code)
    }

    @Test fun `disable without a reachable server keeps everything for a retry`() {
        val (phone, account) = enabledPhone()
        val offline = TouchstoneClient(HttpUrlConnectionTransport("http://127.0.0.1:9", connectTimeoutMillis = 2_000))
        val cut = server.phone(client = offline, keyStore = phone.keyStore, verifier = phone.verifier, stateStore = phone.state)
        val error = expectFailure<TouchstoneException.Transport> { cut.biometrics.disable(account) }
        assertEquals(TransportFailure.UNREACHABLE, error.failure)
        assertEquals(1, phone.keyStore.tags.size)
        assertTrue(blocking { phone.biometrics.status() } is BiometricLogin.Status.Enabled)
    }
}
