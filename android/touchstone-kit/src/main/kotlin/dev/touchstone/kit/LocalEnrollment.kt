package dev.touchstone.kit

import org.json.JSONObject

/**
 * What the app remembers about its biometric enrolment.
 *
 * @property keyTag The key's alias in the [DeviceKeyStore].
 * @property email The account's address, for display ("Sign in as ...").
 * @property pinSet Whether an app PIN was set for this registration through this SDK.
 * @property proofKeyTag The proof key's alias in the [ProofKeyStore] the sessions of this enrolment's sign-ins are bound
 * to (DPoP); null: none.
 */
data class LocalEnrollment(
    val userId: String,
    val registrationId: String,
    val keyTag: String,
    val policy: KeyAccessPolicy,
    val email: String?,
    val pinSet: Boolean = false,
    val proofKeyTag: String? = null,
) {
    internal fun toJson(): String = JSONObject()
        .put("userId", userId).put("registrationId", registrationId).put("keyTag", keyTag)
        .put("policy", policy.name).put("email", email ?: JSONObject.NULL).put("pinSet", pinSet)
        .put("proofKeyTag", proofKeyTag ?: JSONObject.NULL).toString()

    internal companion object {
        /** Reads what [toJson] wrote; throws [MalformedAnswer] for anything else. */
        fun fromJson(text: String): LocalEnrollment {
            val json = Json.parseObject(text.toByteArray(Charsets.UTF_8))
            val policy = KeyAccessPolicy.values().firstOrNull { it.name == json.string("policy") }
                ?: throw MalformedAnswer("unknown policy")
            return LocalEnrollment(json.string("userId"), json.string("registrationId"), json.string("keyTag"), policy,
                json.stringOrNull("email"), json.boolOrNull("pinSet") ?: false, json.stringOrNull("proofKeyTag"))
        }
    }
}
