package dev.touchstone.kit

import org.json.JSONObject

/** A challenge to sign (`registrations/start`, `authentications/start`). */
data class ChallengeGrant(val registrationId: String, val challenge: String, val expiresAt: String) {
    internal companion object {
        fun from(json: JSONObject) = ChallengeGrant(json.string("registrationId"), json.string("challenge"), json.string("expiresAt"))
    }
}
