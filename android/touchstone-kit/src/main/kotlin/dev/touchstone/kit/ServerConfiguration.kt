package dev.touchstone.kit

import org.json.JSONObject

/**
 * What the server allows, from `GET /v1/config`.
 *
 * @property biometricsEnabled Whether the server accepts device-key sign-in at all.
 * @property algorithms The device-key algorithms it accepts (`ES256`, ...).
 */
data class ServerConfiguration(
    val biometricsEnabled: Boolean,
    val devicePolicy: String,
    val algorithms: List<String>,
    val challengeTtlSeconds: Int,
) {
    internal companion object {
        fun from(json: JSONObject): ServerConfiguration {
            val biometrics = json.obj("biometrics")
            return ServerConfiguration(
                biometricsEnabled = biometrics.bool("enabled"),
                devicePolicy = biometrics.string("devicePolicy"),
                algorithms = biometrics.array("algorithms").strings("algorithms"),
                challengeTtlSeconds = biometrics.int("challengeTTLSeconds"),
            )
        }
    }
}
