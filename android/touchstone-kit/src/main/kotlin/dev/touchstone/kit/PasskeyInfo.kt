package dev.touchstone.kit

import org.json.JSONObject

/** A passkey as the server lists it. */
data class PasskeyInfo(
    val id: String,
    val name: String?,
    val aaguid: String,
    val backupEligible: Boolean,
    val backedUp: Boolean,
    val createdAt: String,
    val lastUsedAt: String?,
) {
    internal companion object {
        fun from(json: JSONObject) = PasskeyInfo(
            id = json.string("id"),
            name = json.stringOrNull("name"),
            aaguid = json.string("aaguid"),
            backupEligible = json.bool("backupEligible"),
            backedUp = json.bool("backedUp"),
            createdAt = json.string("createdAt"),
            lastUsedAt = json.stringOrNull("lastUsedAt"),
        )
    }
}
