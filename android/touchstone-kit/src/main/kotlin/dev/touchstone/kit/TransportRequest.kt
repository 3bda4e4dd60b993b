package dev.touchstone.kit

/**
 * One HTTP exchange with the Touchstone server.
 *
 * @property path Path and query, starting with `/`.
 */
class TransportRequest(
    val method: String,
    val path: String,
    val headers: Map<String, String> = emptyMap(),
    val body: ByteArray? = null,
)
