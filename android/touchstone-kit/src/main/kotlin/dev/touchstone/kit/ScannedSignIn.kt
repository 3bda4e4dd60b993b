package dev.touchstone.kit

import java.net.URI
import java.net.URLDecoder

/**
 * What a scanned sign-in QR code says (`touchstone://sign-in?request=&secret=&server=`).
 *
 * @property server The server the code is for (its issuer).
 */
class ScannedSignIn private constructor(val requestId: String, internal val secret: String, val server: String) {
    /** Never prints the secret. */
    override fun toString() = "ScannedSignIn(requestId=$requestId, server=$server)"

    companion object {
        /** Reads a scanned code; null for anything that is not a Touchstone sign-in code. */
        fun parse(text: String): ScannedSignIn? {
            val uri = try {
                URI(text)
            } catch (e: Exception) {
                return null
            }
            if (uri.scheme != "touchstone" || uri.host != "sign-in") return null
            val query = uri.rawQuery ?: return null
            val items = HashMap<String, String>()
            for (part in query.split('&')) {
                val name = part.substringBefore('=')
                val value = try {
                    URLDecoder.decode(part.substringAfter('=', ""), "UTF-8")
                } catch (e: IllegalArgumentException) {
                    return null
                }
                items.putIfAbsent(name, value)
            }
            val request = items["request"]?.takeIf { it.isNotEmpty() && it.toByteArray().size <= 64 } ?: return null
            val secret = items["secret"]?.takeIf { it.isNotEmpty() && it.toByteArray().size <= 128 } ?: return null
            val server = items["server"]?.takeIf { it.isNotEmpty() } ?: return null
            return ScannedSignIn(request, secret, server)
        }

        /** Whether [server] (a scanned code's issuer) has the origin of [base] (this client's server). */
        internal fun sameOrigin(server: String, base: String): Boolean {
            fun origin(text: String): Triple<String, String, Int>? = try {
                val uri = URI(text)
                val scheme = uri.scheme?.lowercase() ?: return null
                val host = uri.host?.lowercase() ?: return null
                val port = if (uri.port != -1) uri.port else when (scheme) {
                    "https" -> 443
                    "http" -> 80
                    else -> return null
                }
                Triple(scheme, host, port)
            } catch (e: Exception) {
                null
            }
            val scanned = origin(server) ?: return false
            return scanned == origin(base)
        }
    }
}
