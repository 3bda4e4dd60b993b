package dev.touchstone.kit

import org.json.JSONArray
import org.json.JSONObject
import java.util.Base64

// Sign-ups without a password (issue #42): from the phone with a device key, or with a passkey. TouchstoneKit's
// `TouchstoneClient+SignUp.swift`.

/** A device-key sign-up that has been started: sign the exact UTF-8 bytes of [challenge] and finish it. */
data class DeviceKeySignUpGrant(val signUpId: String, val challenge: String, val expiresAt: String)

/** What a finished device-key sign-up gives: the first session, the registration and its device credential (shown once). */
class SignedUp(val session: TouchstoneSession, val registration: BiometricRegistration, val deviceCredential: String) {
    /** Never prints the credential or the token. */
    override fun toString() = "SignedUp(user=${session.user.id}, registration=${registration.id})"
}

/** `POST /v1/android-key-attestation/sign-up-challenges`: an attestation challenge for a key made to sign up (no session). */
suspend fun TouchstoneClient.androidKeyAttestationSignUpChallenge(): String {
    val path = "/v1/android-key-attestation/sign-up-challenges"
    val body = call("POST", path)
    return decoded(path) { body.string("challenge") }
}

/**
 * `POST /v1/biometrics/sign-ups/start`: the new account's address and the device key (no session).
 *
 * @param publicKey The key as SubjectPublicKeyInfo DER.
 * @param keyAttestation The key's certificate chain, leaf first (DER), made with a sign-up challenge.
 */
suspend fun TouchstoneClient.startSignUp(
    email: String,
    displayName: String?,
    publicKey: ByteArray,
    algorithm: String,
    deviceId: String,
    deviceName: String?,
    keyAttestation: List<ByteArray>? = null,
): DeviceKeySignUpGrant {
    val path = "/v1/biometrics/sign-ups/start"
    val chain = keyAttestation?.let { certificates -> JSONArray(certificates.map { Base64.getEncoder().encodeToString(it) }) }
    val body = call("POST", path, body = jsonOf(
        "email" to email, "displayName" to displayName, "publicKey" to TouchstoneClient.base64Url(publicKey), "algorithm" to algorithm,
        "deviceId" to deviceId, "deviceName" to deviceName, "keyAttestation" to chain,
    ))
    return decoded(path) { DeviceKeySignUpGrant(body.string("signUpId"), body.string("challenge"), body.string("expiresAt")) }
}

/** `POST /v1/biometrics/sign-ups/finish`: the signature over the challenge's UTF-8 bytes. */
suspend fun TouchstoneClient.finishSignUp(signUpId: String, signature: ByteArray, proofKey: ProofKeyEnrolment? = null): SignedUp {
    val path = "/v1/biometrics/sign-ups/finish"
    val input = jsonOf("signUpId" to signUpId, "signature" to TouchstoneClient.base64Url(signature))
    val body = call("POST", path, body = proofKey?.addTo(input) ?: input)
    return decoded(path) {
        SignedUp(TouchstoneSession.from(body), BiometricRegistration.from(body.obj("registration")), body.string("deviceCredential"))
    }
}

/** `POST /v1/passkeys/sign-ups/options`: creation options for a new account's passkey, as JSON for Credential Manager. */
suspend fun TouchstoneClient.passkeySignUpOptions(email: String, displayName: String?): JSONObject =
    call("POST", "/v1/passkeys/sign-ups/options", body = jsonOf("email" to email, "displayName" to displayName))

/** `POST /v1/passkeys/sign-ups/verify`: the registration response; the new account's first session. */
suspend fun TouchstoneClient.verifyPasskeySignUp(response: JSONObject): TouchstoneSession {
    val path = "/v1/passkeys/sign-ups/verify"
    val body = call("POST", path, body = response)
    return decoded(path) { TouchstoneSession.from(body) }
}
