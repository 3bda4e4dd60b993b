package dev.touchstone.kit

/**
 * What a browser (or a desktop app) gets when it asks to sign in with the phone (`POST /v1/sign-in-requests`).
 *
 * @property pollToken The secret the browser polls with; keep it in memory only.
 * @property number The number to show, large.
 * @property qr `touchstone://sign-in?request=...&secret=...&server=...`, to show as a QR code.
 */
class StartedSignInRequest(val requestId: String, val pollToken: String, val number: Int, val expiresAt: String, val qr: String) {
    override fun toString() = "StartedSignInRequest(requestId=$requestId, expiresAt=$expiresAt)"
}
