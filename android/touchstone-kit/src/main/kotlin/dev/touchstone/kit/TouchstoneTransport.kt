package dev.touchstone.kit

/**
 * Sends requests to the server. Swap it to add certificate pinning, logging or a test double.
 *
 * Implementations throw [java.io.IOException] (or [java.net.SocketTimeoutException]) when no HTTP answer arrived;
 * [TouchstoneClient] reports those as [TouchstoneException.Transport]. Any HTTP status is an answer, not an exception.
 */
interface TouchstoneTransport {
    /** Sends [request] and returns the answer, whatever its status. */
    suspend fun send(request: TransportRequest): TransportResponse

    /** The server's origin (`https://auth.example.com`), when the transport knows it: a scanned sign-in code must name it. */
    val serverUrl: String? get() = null
}
