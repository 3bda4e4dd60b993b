package dev.touchstone.kit

import org.json.JSONObject

/**
 * `session` as the server returns it.
 *
 * @property token The bearer token. Keep it in memory or in encrypted storage, never in plain preferences or logs.
 * @property methods How the session was opened: `password`, `biometric`, `passkey`, `pin`, `email_code`,
 * `recovery_code` or `phone_approval`.
 */
data class TouchstoneSessionInfo(
    val token: String,
    val expiresAt: String,
    val idleExpiresAt: String,
    val authenticatedAt: String,
    val methods: List<String>,
) {
    /** Never prints the token. */
    override fun toString() = "TouchstoneSessionInfo(methods=$methods, expiresAt=$expiresAt)"

    internal companion object {
        fun from(json: JSONObject) = TouchstoneSessionInfo(
            token = json.string("token"),
            expiresAt = json.string("expiresAt"),
            idleExpiresAt = json.string("idleExpiresAt"),
            authenticatedAt = json.string("authenticatedAt"),
            methods = json.array("methods").strings("methods"),
        )
    }
}
