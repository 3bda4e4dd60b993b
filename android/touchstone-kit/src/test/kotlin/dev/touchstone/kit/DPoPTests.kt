package dev.touchstone.kit

import dev.touchstone.kit.software.SoftwareKeyStore
import java.security.Signature
import java.util.Base64
import org.json.JSONObject
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Test

/**
 * The phone's proof key and bound sessions (issue #43) against the real server: enrolment registers the proof key,
 * sign-ins give sessions the client sends with DPoP proofs, and a copy of the token is worthless elsewhere.
 * TouchstoneKit's `DPoPClientTests`.
 */
class DPoPTests {
    private val server = TestServer.shared

    @Test fun `a biometric session is bound to the proof key and worthless without it`() {
        val phone = server.phone()
        val account = server.newAccount()
        val registration = blocking { phone.biometrics.enable(account) }
        val enrollment = (blocking { phone.biometrics.status() } as BiometricLogin.Status.Enabled).enrollment
        val tag = assertNotNull(enrollment.proofKeyTag).let { enrollment.proofKeyTag!! }
        assertEquals(blocking { phone.keyStore.proofKeyPublicKey(tag) }!!.thumbprint, registration.proofKeyThumbprint)

        val session = blocking { phone.biometrics.signIn(reason = "Sign in") }
        assertTrue(phone.client.isBound(session))
        assertFalse("the password session stays a bearer session", phone.client.isBound(account))
        assertEquals(account.user.id, blocking { phone.client.currentSession(session.session.token) }.user.id)
        // The same token from another client (another app, a script): refused.
        val error = expectFailure<TouchstoneException.Server> { server.client().currentSession(session.session.token) }
        assertEquals("invalid_dpop_proof", error.serverCode)
        assertEquals(401, error.httpStatus)

        // Its access tokens are bound to the key; the headers for the app's own API carry a proof.
        val accessToken = blocking { phone.client.accessToken(session) }
        val claims = JSONObject(String(Base64.getUrlDecoder().decode(accessToken.split(".")[1])))
        assertEquals(registration.proofKeyThumbprint, claims.getJSONObject("cnf").getString("jkt"))
        val headers = blocking { phone.client.authorizationHeaders(session, accessToken, "GET", "https://api.example.com/me?x=1") }
        assertEquals("DPoP $accessToken", headers["Authorization"])
        assertNotNull(headers["DPoP"])

        // Disabling forgets the proof key with the device key.
        blocking { phone.biometrics.disable(session) }
        assertTrue(phone.keyStore.tags.isEmpty())
        assertTrue(phone.keyStore.proofTags.isEmpty())
    }

    @Test fun `the client retries with the server's nonce and corrects a phone clock ten minutes slow`() {
        val nonces = TestServer.start(mapOf("TOUCHSTONE_DPOP_NONCE" to "on"))
        try {
            val client = TouchstoneClient(HttpUrlConnectionTransport(nonces.baseUrl), now = { System.currentTimeMillis() - 600_000 })
            val phone = nonces.phone(client = client)
            blocking { phone.biometrics.enable(nonces.newAccount(client)) }
            val session = blocking { phone.biometrics.signIn(reason = "Sign in") }
            assertEquals(session.user.id, blocking { client.currentSession(session.session.token) }.user.id)
            assertEquals(session.user.id, blocking { client.currentSession(session.session.token) }.user.id)
        } finally {
            nonces.stop()
        }
    }

    /** A key store without proof keys, as an older SDK enrolled. */
    private class PlainKeyStore(val inner: SoftwareKeyStore) : DeviceKeyStore {
        override suspend fun createKey(tag: String, policy: KeyAccessPolicy, attestationChallenge: ByteArray?) = inner.createKey(tag, policy, attestationChallenge)
        override suspend fun signer(tag: String): Signature = inner.signer(tag)
        override suspend fun deleteKey(tag: String) = inner.deleteKey(tag)
        override suspend fun keyExists(tag: String) = inner.keyExists(tag)
    }

    @Test fun `an enrolment without a proof key gets one and its sessions are bound from then`() {
        val keys = server.attestingKeyStore()
        val state = dev.touchstone.kit.software.softwareStateStore()
        val client = server.client()
        val old = BiometricLogin(client, PlainKeyStore(keys), dev.touchstone.kit.software.ScriptedVerifier(), state)
        val account = server.newAccount(client)
        assertNull(blocking { old.enable(account) }.proofKeyThumbprint)
        val bearer = blocking { old.signIn(reason = "Sign in") }
        assertFalse(client.isBound(bearer))

        val upgraded = BiometricLogin(client, keys, dev.touchstone.kit.software.ScriptedVerifier(), state)
        assertNotNull(blocking { upgraded.addProofKey(bearer) }.proofKeyThumbprint)
        assertTrue(client.isBound(bearer))
        assertEquals(account.user.id, blocking { client.currentSession(bearer.session.token) }.user.id)
        assertEquals("proof_key_exists", expectFailure<TouchstoneException.Server> { upgraded.addProofKey(bearer) }.serverCode)
        val next = blocking { upgraded.signIn(reason = "Sign in") }
        assertTrue(client.isBound(next))
        // A session kept from an earlier launch is bound again by resume.
        val relaunched = server.client()
        blocking { BiometricLogin(relaunched, keys, dev.touchstone.kit.software.ScriptedVerifier(), state).resume(next) }
        assertEquals(account.user.id, blocking { relaunched.currentSession(next.session.token) }.user.id)
    }
}
