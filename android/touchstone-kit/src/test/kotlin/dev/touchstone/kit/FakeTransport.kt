package dev.touchstone.kit

/** A transport that answers every request with [answer] and keeps the requests. */
class FakeTransport(override val serverUrl: String? = "https://auth.example.com", private val answer: (TransportRequest) -> TransportResponse) : TouchstoneTransport {
    val requests = java.util.Collections.synchronizedList(ArrayList<TransportRequest>())

    override suspend fun send(request: TransportRequest): TransportResponse {
        requests.add(request)
        return answer(request)
    }
}
