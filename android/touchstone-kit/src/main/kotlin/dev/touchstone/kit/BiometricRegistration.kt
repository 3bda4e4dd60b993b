package dev.touchstone.kit

import org.json.JSONObject

/**
 * A biometric registration (one device key of a user).
 *
 * @property status `active`, `revoked`, `replaced`, `invalidated` or `locked`.
 * @property keyAttestationLevel `tee` or `strongbox` when an Android key attestation vouched for the key.
 * @property pin The app PIN: `none`, `set` or `disabled`.
 */
data class BiometricRegistration(
    val id: String,
    val userId: String,
    val deviceId: String,
    val deviceName: String?,
    val algorithm: String,
    val status: String,
    val createdAt: String,
    val lastUsedAt: String?,
    val keyAttestationLevel: String?,
    val pin: String?,
    /** The thumbprint of the phone's DPoP proof key the registration's sessions are bound to (null: none). */
    val proofKeyThumbprint: String? = null,
) {
    internal companion object {
        fun from(json: JSONObject) = BiometricRegistration(
            id = json.string("id"),
            userId = json.string("userId"),
            deviceId = json.string("deviceId"),
            deviceName = json.stringOrNull("deviceName"),
            algorithm = json.string("algorithm"),
            status = json.string("status"),
            createdAt = json.string("createdAt"),
            lastUsedAt = json.stringOrNull("lastUsedAt"),
            keyAttestationLevel = json.objOrNull("keyAttestation")?.stringOrNull("securityLevel"),
            pin = json.stringOrNull("pin"),
            proofKeyThumbprint = json.stringOrNull("proofKeyThumbprint"),
        )
    }
}
