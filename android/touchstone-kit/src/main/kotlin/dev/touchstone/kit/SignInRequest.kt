package dev.touchstone.kit

import org.json.JSONObject

/**
 * A request to sign in somewhere else (a browser on a computer, or an app's backend through OpenID CIBA) waiting for
 * this phone's approval (`GET /v1/sign-in-requests/pending`).
 *
 * Show [client], the browser ([SignInRequestPayload.browserUserAgent]) or the binding message, and the three
 * [numbers]; the user picks the one the computer shows.
 *
 * @property numbers Three numbers, the computer's among them; empty for a backchannel request (check its binding
 * message instead).
 */
data class SignInRequest(
    val requestId: String,
    val client: String,
    val numbers: List<Int>,
    val payload: SignInRequestPayload,
) {
    /** Whether the user must pick a number (a browser's request) or check a binding message (a backchannel request). */
    val needsNumber: Boolean get() = payload.kind == SignInRequestPayload.SIGN_IN_KIND

    internal companion object {
        fun from(json: JSONObject) = SignInRequest(
            requestId = json.string("requestId"),
            client = json.string("client"),
            numbers = json.array("numbers").mapItems("numbers") { (it as? Int) ?: throw MalformedAnswer("a number is not an integer") },
            payload = SignInRequestPayload.from(json.obj("payload")),
        )
    }
}
