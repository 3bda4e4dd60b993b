package dev.touchstone.kit

import org.json.JSONObject

/**
 * A confirmation as the server reports it.
 *
 * @property status `pending`, `approved`, `declined` or `expired`.
 * @property method `biometric` or `passkey`, once approved.
 */
data class ConfirmationInfo(
    val id: String,
    val status: String,
    val summary: String,
    val createdAt: String,
    val expiresAt: String,
    val approvedAt: String?,
    val declinedAt: String?,
    val method: String?,
    val registrationId: String?,
) {
    internal companion object {
        fun from(json: JSONObject) = ConfirmationInfo(
            id = json.string("id"),
            status = json.string("status"),
            summary = json.string("summary"),
            createdAt = json.string("createdAt"),
            expiresAt = json.string("expiresAt"),
            approvedAt = json.stringOrNull("approvedAt"),
            declinedAt = json.stringOrNull("declinedAt"),
            method = json.stringOrNull("method"),
            registrationId = json.stringOrNull("registrationId"),
        )
    }
}
