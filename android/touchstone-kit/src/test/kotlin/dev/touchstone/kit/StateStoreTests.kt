package dev.touchstone.kit

import dev.touchstone.kit.software.InMemoryKeyValueStore
import dev.touchstone.kit.software.softwareStateStore
import javax.crypto.KeyGenerator
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Test

/** The sealed secure preferences, and what the SDK does when they cannot be read. */
class StateStoreTests {
    private val enrollment = LocalEnrollment("u1", "r1", "touchstone.k1", KeyAccessPolicy.BIOMETRY_CURRENT_SET, "ana@example.com")

    @Test fun `values round-trip sealed, and nothing is stored in clear`() {
        val backing = InMemoryKeyValueStore()
        val store = softwareStateStore(backing)
        blocking {
            store.saveEnrollment(enrollment)
            store.saveDeviceCredential("secret-device-credential", "r1")
        }
        assertEquals(enrollment, blocking { store.loadEnrollment() })
        assertEquals("secret-device-credential", blocking { store.loadDeviceCredential("r1") })
        assertNull("a credential is only given for its registration", blocking { store.loadDeviceCredential("r2") })
        val id = blocking { store.deviceId() }
        assertEquals(id, blocking { store.deviceId() })
        for (value in backing.values.values) {
            assertFalse(value.contains("secret-device-credential"))
            assertFalse(value.contains("ana@example.com"))
            assertTrue(value.startsWith("v1."))
        }
    }

    @Test fun `a lost key, a damaged value or swapped values cannot be read`() {
        val backing = InMemoryKeyValueStore()
        val key = KeyGenerator.getInstance("AES").apply { init(256) }.generateKey()
        val store = softwareStateStore(backing, key)
        blocking {
            store.saveEnrollment(enrollment)
            store.saveDeviceCredential("c", "r1")
        }
        val other = softwareStateStore(backing)
        expectUnreadable { other.loadEnrollment() }
        val sealed = backing.values.getValue("enrollment")
        backing.values["enrollment"] = sealed.dropLast(4) + (if (sealed.endsWith("AAAA")) "BBBB" else "AAAA")
        expectUnreadable { store.loadEnrollment() }
        backing.values["enrollment"] = backing.values.getValue("device_credential")
        expectUnreadable { store.loadEnrollment() }
        backing.values["enrollment"] = "not sealed"
        expectUnreadable { store.loadEnrollment() }
        val failing = dev.touchstone.kit.SealedStateStore(backing) { throw java.security.ProviderException("Keystore unavailable") }
        expectUnreadable { failing.loadDeviceCredential("r1") }
    }

    private fun expectUnreadable(block: suspend () -> Any?) {
        try {
            blocking { block() }
            throw AssertionError("read back")
        } catch (e: LocalStateUnreadableException) {
            // expected
        }
    }

    @Test fun `an undecryptable store is reported as not enabled with its reason and wiped`() {
        val server = TestServer.shared
        val backing = InMemoryKeyValueStore()
        val phone = server.phone(stateStore = softwareStateStore(backing))
        blocking { phone.biometrics.enable(server.newAccount()) }
        // The Keystore key that sealed the state is gone (a backup restored onto another phone).
        val restored = server.phone(keyStore = phone.keyStore, verifier = phone.verifier, stateStore = softwareStateStore(backing))
        assertEquals(BiometricLogin.Status.NotEnabled, blocking { restored.biometrics.status() })
        val error = expectFailure<TouchstoneException.Enrollment> { restored.biometrics.signIn("Sign in") }
        assertEquals(TouchstoneErrorCode.NOT_ENABLED, error.code)
        assertEquals(NotEnabledReason.STATE_UNREADABLE, error.reason)
        assertTrue("the unreadable values were wiped", backing.values.isEmpty())
        assertEquals(NotEnabledReason.NEVER_ENABLED, expectFailure<TouchstoneException.Enrollment> { restored.biometrics.signIn("Sign in") }.reason)
        // Enabling again starts over on the same phone.
        blocking { restored.biometrics.enable(server.newAccount()) }
        blocking { restored.biometrics.signIn("Sign in") }
    }
}
