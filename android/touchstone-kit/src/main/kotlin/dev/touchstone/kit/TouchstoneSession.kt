package dev.touchstone.kit

import org.json.JSONObject

/** A signed-in user: what sign-up, password sign-in, biometric sign-in, the PIN and passkeys return. */
data class TouchstoneSession(val user: TouchstoneUser, val session: TouchstoneSessionInfo) {
    internal companion object {
        fun from(json: JSONObject) = TouchstoneSession(TouchstoneUser.from(json.obj("user")), TouchstoneSessionInfo.from(json.obj("session")))
    }
}
