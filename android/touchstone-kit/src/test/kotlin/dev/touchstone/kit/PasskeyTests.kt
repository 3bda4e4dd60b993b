package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/** Passkeys: the server's options JSON to the provider and its response JSON back, as Credential Manager passes them. */
class PasskeyTests {
    private val server = TestServer.shared

    @Test fun `a passkey registered from the app signs in with the app's origin`() {
        val authenticator = SoftwareAuthenticator()
        val passkeys = PasskeyLogin(server.client(), authenticator)
        val account = server.newAccount()
        val passkey = blocking { passkeys.register(account, name = "Pixel passkey") }
        assertEquals("Pixel passkey", passkey.name)
        assertTrue(passkey.backupEligible)
        val creation = authenticator.seenOptions.single()
        assertEquals("localhost", creation.getJSONObject("rp").getString("id"))
        assertEquals(account.user.email, creation.getJSONObject("user").getString("name"))

        val session = blocking { passkeys.signIn() }
        assertEquals(account.user.id, session.user.id)
        assertEquals(listOf("passkey"), session.session.methods)
        val byEmail = blocking { passkeys.signIn(email = account.user.email) }
        assertEquals(account.user.id, byEmail.user.id)
        assertEquals(1, blocking { passkeys.client.passkeys(account.session.token) }.size)
    }

    @Test fun `a second passkey on the same device is excluded`() {
        val authenticator = SoftwareAuthenticator()
        val passkeys = PasskeyLogin(server.client(), authenticator)
        val account = server.newAccount()
        blocking { passkeys.register(account) }
        val error = expectFailure<TouchstoneException.Passkey> { passkeys.register(account) }
        assertEquals(PasskeyErrorCode.MATCHED_EXCLUDED_CREDENTIAL, error.passkeyCode)
    }

    @Test fun `an origin the server does not know is refused`() {
        val passkeys = PasskeyLogin(server.client(), SoftwareAuthenticator(origin = "android:apk-key-hash:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
        val error = expectFailure<TouchstoneException.Passkey> { passkeys.register(server.newAccount()) }
        assertEquals(PasskeyErrorCode.SERVER, error.passkeyCode)
        assertEquals(400, error.httpStatus)
    }

    @Test fun `a passkey the server no longer knows is CREDENTIAL_NOT_FOUND`() {
        val authenticator = SoftwareAuthenticator()
        val passkeys = PasskeyLogin(server.client(), authenticator)
        val account = server.newAccount()
        val passkey = blocking { passkeys.register(account) }
        blocking { passkeys.client.callWith("DELETE", "/v1/passkeys/${passkey.id}", "Bearer ${account.session.token}", null) }
        val error = expectFailure<TouchstoneException.Passkey> { passkeys.signIn() }
        assertEquals(PasskeyErrorCode.CREDENTIAL_NOT_FOUND, error.passkeyCode)
        assertEquals("passkey_not_found", error.serverCode)
    }

    @Test fun `without a passkey on the device sign-in is NO_CREDENTIALS and registration needs a strong proof`() {
        val phone = server.phone()
        // One client for the app, as an app has: the PIN session is bound to the phone's proof key in it.
        val passkeys = PasskeyLogin(phone.client, SoftwareAuthenticator())
        assertEquals(PasskeyErrorCode.NO_CREDENTIALS, expectFailure<TouchstoneException.Passkey> { passkeys.signIn() }.passkeyCode)
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        blocking { phone.biometrics.setPin("4821", account) }
        val pinSession = blocking { phone.biometrics.signInWithPin("4821") }
        val error = expectFailure<TouchstoneException.Passkey> { passkeys.register(pinSession) }
        assertEquals("reauthentication_required", error.serverCode)
        // A device key is a strong proof; after it the passkey is added, and it proves the session again in turn.
        val fresh = blocking { phone.biometrics.reauthenticate(pinSession, "Confirm it's you") }
        blocking { passkeys.register(fresh) }
        val again = blocking { passkeys.reauthenticate(pinSession) }
        assertEquals(listOf("passkey"), again.session.methods)
    }

    @Test fun `options without a challenge never reach the provider`() {
        val authenticator = SoftwareAuthenticator()
        val fake = TouchstoneClient(FakeTransport { TransportResponse(200, """{"rpId": "localhost"}""".toByteArray()) })
        val error = expectFailure<TouchstoneException.Passkey> { PasskeyLogin(fake, authenticator).signIn() }
        assertEquals(PasskeyErrorCode.INVALID_RESPONSE, error.passkeyCode)
        assertTrue(authenticator.seenOptions.isEmpty())
    }
}
