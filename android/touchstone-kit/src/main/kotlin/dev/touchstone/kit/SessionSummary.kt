package dev.touchstone.kit

import org.json.JSONObject

/**
 * One of the account's live sessions, as `GET /v1/session/sessions` lists it (no token).
 *
 * @property id The session's id (its tokens' `sid`).
 * @property lastSeenAt When it was last used, to the minute (null for sessions opened before it was kept).
 * @property address The client address it was opened from.
 * @property userAgent The `User-Agent` it was opened with (at most 200 characters).
 * @property client The OpenID client holding tokens from it, if any.
 * @property current Whether this is the caller's session.
 */
data class SessionSummary(
    val id: String,
    val createdAt: String,
    val lastSeenAt: String?,
    val methods: List<String>,
    val address: String?,
    val userAgent: String?,
    val client: String?,
    val current: Boolean,
) {
    internal companion object {
        fun from(json: JSONObject) = SessionSummary(
            id = json.string("id"),
            createdAt = json.string("createdAt"),
            lastSeenAt = json.stringOrNull("lastSeenAt"),
            methods = json.array("methods").strings("methods"),
            address = json.stringOrNull("address"),
            userAgent = json.stringOrNull("userAgent"),
            client = json.stringOrNull("client"),
            current = json.bool("current"),
        )
    }
}
