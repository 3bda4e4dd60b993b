package dev.touchstone.kit

import org.json.JSONObject

/**
 * The platform's passkey UI: Android's Credential Manager in the adapter, a software authenticator in tests. The
 * JSON is WebAuthn's: the server's options in, the credential's response out, as Credential Manager takes and gives
 * them.
 */
interface PasskeyAuthorizer {
    /** Creates a passkey for `PublicKeyCredentialCreationOptionsJSON`; returns `RegistrationResponseJSON`. */
    suspend fun register(options: JSONObject): JSONObject

    /** Signs `PublicKeyCredentialRequestOptionsJSON`'s challenge with a passkey the user picks; returns `AuthenticationResponseJSON`. */
    suspend fun authenticate(options: JSONObject): JSONObject
}
