package dev.touchstone.kit

/** The server's answer: its status, body and (lower-cased) header names with their values. */
class TransportResponse(
    val status: Int,
    val body: ByteArray,
    val headers: Map<String, String> = emptyMap(),
)
