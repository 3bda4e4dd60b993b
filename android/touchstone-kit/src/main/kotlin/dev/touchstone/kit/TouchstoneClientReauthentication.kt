package dev.touchstone.kit

import org.json.JSONObject

// Fresh strong authentication (issue #42): proving a password, a passkey or a device key again in a live session, so
// privileged acts (enrolment, PINs, the address, the password, recovery codes, the export, deletion) are allowed for
// the server's window (`TOUCHSTONE_REAUTH_SECONDS`). TouchstoneKit's `TouchstoneClient+Reauthentication.swift`.

/** `POST /v1/session/reauthenticate` with the account's password; returns the session as it now is (same token). */
suspend fun TouchstoneClient.reauthenticate(password: String, token: String): TouchstoneSessionInfo =
    reauthenticateWith(jsonOf("password" to password), token)

/** `POST /v1/session/reauthenticate/device-key-challenge`: a challenge for [registrationId], bound to this session. */
suspend fun TouchstoneClient.reauthenticationChallenge(registrationId: String, token: String): ChallengeGrant {
    val path = "/v1/session/reauthenticate/device-key-challenge"
    val body = call("POST", path, token = token, body = jsonOf("registrationId" to registrationId))
    return decoded(path) { ChallengeGrant.from(body) }
}

/** `POST /v1/session/reauthenticate` with a device-key signature over the challenge's UTF-8 bytes. */
suspend fun TouchstoneClient.reauthenticate(registrationId: String, challenge: String, signature: ByteArray, token: String): TouchstoneSessionInfo =
    reauthenticateWith(jsonOf("deviceKey" to jsonOf(
        "registrationId" to registrationId, "challenge" to challenge, "signature" to TouchstoneClient.base64Url(signature),
    )), token)

/**
 * `POST /v1/session/reauthenticate/passkey-options`: WebAuthn request options (user verification required) for the
 * account's passkeys, as JSON for Credential Manager.
 */
suspend fun TouchstoneClient.reauthenticationPasskeyOptions(token: String): JSONObject =
    call("POST", "/v1/session/reauthenticate/passkey-options", token = token)

/** `POST /v1/session/reauthenticate` with a passkey assertion (`AuthenticationResponseJSON`) over those options. */
suspend fun TouchstoneClient.reauthenticate(passkeyAssertion: JSONObject, token: String): TouchstoneSessionInfo =
    reauthenticateWith(jsonOf("passkey" to passkeyAssertion), token)

private suspend fun TouchstoneClient.reauthenticateWith(proof: JSONObject, token: String): TouchstoneSessionInfo {
    val path = "/v1/session/reauthenticate"
    val body = call("POST", path, token = token, body = proof)
    return decoded(path) { TouchstoneSessionInfo.from(body.obj("session")) }
}
