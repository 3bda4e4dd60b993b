package dev.touchstone.kit

/**
 * Where the SDK writes what it does (`POST /v1/biometrics/authentications/finish -> 200`), for an app's debug log.
 * Lines carry methods, paths without their query, statuses and error codes: never a session token, device
 * credential, PIN, password, signature or code.
 */
fun interface TouchstoneLogger {
    /** Writes one line. */
    fun log(message: String)
}
