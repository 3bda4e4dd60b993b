package dev.touchstone.kit

import org.json.JSONObject

/**
 * `user` as the server returns it.
 *
 * @property emailVerified Whether a mailed code or link proved the address (null from older servers).
 * @property hasPassword Whether the account has a password; it may have only passkeys and device keys (null from older servers).
 */
data class TouchstoneUser(
    val id: String,
    val email: String,
    val displayName: String?,
    val createdAt: String,
    val emailVerified: Boolean?,
    val hasPassword: Boolean? = null,
) {
    internal companion object {
        fun from(json: JSONObject) = TouchstoneUser(
            id = json.string("id"),
            email = json.string("email"),
            displayName = json.stringOrNull("displayName"),
            createdAt = json.string("createdAt"),
            emailVerified = json.boolOrNull("emailVerified"),
            hasPassword = json.boolOrNull("hasPassword"),
        )
    }
}
