package dev.touchstone.kit

/**
 * An access token (a short-lived JWT for the app's own API) and when it expires, by the client's clock.
 *
 * @property expiresAtMillis Milliseconds since the epoch, from the answer's `expiresIn`.
 */
class AccessToken(val token: String, val expiresAtMillis: Long) {
    /** Never prints the token. */
    override fun toString() = "AccessToken(expiresAtMillis=$expiresAtMillis)"
}
