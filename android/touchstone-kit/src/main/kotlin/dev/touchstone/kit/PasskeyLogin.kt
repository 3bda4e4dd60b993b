package dev.touchstone.kit

import org.json.JSONObject

/**
 * Passkeys in the app: the server's options, the platform's sheet, the signed answer back, talking to the same
 * endpoints as the web page and returning the same [TouchstoneSession] (TouchstoneKit's `PasskeyLogin`).
 *
 * ```kotlin
 * val passkeys = PasskeyLogin(client, CredentialManagerPasskeyAuthorizer(activity))
 * passkeys.register(passwordSession, name = "Pixel")
 * val session = passkeys.signIn()              // username-less: the sheet lists the user's passkeys
 * ```
 */
class PasskeyLogin(val client: TouchstoneClient, private val authorizer: PasskeyAuthorizer) {
    /**
     * Adds a passkey to the account (the session needs fresh strong authentication: [reauthenticate]).
     *
     * @throws TouchstoneException.Passkey the sheet's outcomes (`CANCELLED`, `FAILED`, ...), `SERVER` (for example
     * `reauthentication_required`, `passkey_already_registered`), `TRANSPORT`.
     */
    suspend fun register(session: TouchstoneSession, name: String? = null): PasskeyInfo {
        val options = server { client.passkeyRegistrationOptions(session.session.token) }
        checkOptions(options, "user", "challenge")
        val response = authorizer.register(options)
        if (name != null) response.put("name", name)
        return server { client.verifyPasskeyRegistration(session.session.token, response) }
    }

    /**
     * Creates an account with a passkey and no password (the sheet makes the passkey, user verification required);
     * returns the new account's first session.
     *
     * @throws TouchstoneException.Passkey the sheet's outcomes, `SERVER` (`email_taken`, `sign_up_disabled`...).
     */
    suspend fun signUp(email: String, displayName: String? = null, name: String? = null): TouchstoneSession {
        val options = server { client.passkeySignUpOptions(email, displayName) }
        checkOptions(options, "user", "challenge")
        val response = authorizer.register(options)
        if (name != null) response.put("name", name)
        return server { client.verifyPasskeySignUp(response) }
    }

    /**
     * Signs in with a passkey: any of the user's ([email] null, username-less) or one of that account's.
     *
     * @throws TouchstoneException.Passkey `CANCELLED`, `NO_CREDENTIALS`, `CREDENTIAL_NOT_FOUND`, `PASSKEY_LOCKED`, `SERVER`.
     */
    suspend fun signIn(email: String? = null): TouchstoneSession {
        val options = server { client.passkeyAuthenticationOptions(email) }
        checkOptions(options, "challenge")
        val response = authorizer.authenticate(options)
        return server { client.verifyPasskeyAuthentication(response) }
    }

    /**
     * Proves one of the account's passkeys again in [session] (the sheet, user verification required), so privileged
     * acts are allowed for the server's window; returns the session as it now is (the same token).
     *
     * @throws TouchstoneException.Passkey the sheet's outcomes, `SERVER` (`no_passkeys`, `invalid_passkey_assertion`...).
     */
    suspend fun reauthenticate(session: TouchstoneSession): TouchstoneSession {
        val token = session.session.token
        val options = server { client.reauthenticationPasskeyOptions(token) }
        checkOptions(options, "challenge")
        val response = authorizer.authenticate(options)
        return TouchstoneSession(session.user, server { client.reauthenticate(response, token) })
    }

    private fun checkOptions(options: JSONObject, vararg fields: String) {
        for (field in fields) {
            if (options.opt(field) == null) {
                throw TouchstoneException.Passkey(PasskeyErrorCode.INVALID_RESPONSE, "the server's passkey options have no '$field'")
            }
        }
    }

    /** Runs a server call, reporting its failures as [TouchstoneException.Passkey]. */
    private suspend fun <T> server(body: suspend () -> T): T = try {
        body()
    } catch (e: TouchstoneException) {
        throw PlatformErrorMapping.passkeyError(e)
    }
}
