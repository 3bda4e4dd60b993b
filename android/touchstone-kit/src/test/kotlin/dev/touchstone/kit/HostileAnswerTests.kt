package dev.touchstone.kit

import java.net.ServerSocket
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/** Malformed or hostile answers, and no answer at all: always a typed [TouchstoneException.Transport], never a crash. */
class HostileAnswerTests {
    private fun client(status: Int, body: String, headers: Map<String, String> = emptyMap()) =
        TouchstoneClient(FakeTransport { TransportResponse(status, body.toByteArray(), headers) })

    private fun unreadable(status: Int, body: String, call: suspend TouchstoneClient.() -> Any?) {
        val client = client(status, body)
        val error = expectFailure<TouchstoneException.Transport> { client.call() }
        assertEquals("$status $body", TransportFailure.UNREADABLE, error.failure)
        assertEquals(TouchstoneErrorCode.TRANSPORT, error.code)
        assertEquals(status, error.httpStatus)
    }

    private val user = """{"id": "u1", "email": "a@example.com", "displayName": null, "createdAt": "2026-11-28T00:00:00Z"}"""
    private val session = """{"token": "t", "expiresAt": "x", "idleExpiresAt": "x", "authenticatedAt": "x", "methods": ["password"]}"""

    @Test fun `a 500 with an HTML page is TRANSPORT with its status`() {
        unreadable(500, "<html><body>Internal Server Error</body></html>") { signIn("a@example.com", "pw") }
        unreadable(502, "") { configuration() }
    }

    @Test fun `a 200 that is not JSON or not an object is unreadable`() {
        unreadable(200, "<html></html>") { signIn("a@example.com", "pw") }
        unreadable(200, "[1, 2]") { signIn("a@example.com", "pw") }
        unreadable(200, "\"text\"") { configuration() }
        unreadable(200, "{\"user\": $user, \"session\": $session} trailing") { signIn("a@example.com", "pw") }
        unreadable(200, "{" + "\"a\":[".repeat(20_000)) { configuration() }
        unreadable(200, "\u0000\u0001\u00ff") { configuration() }
    }

    @Test fun `wrong types and missing fields are unreadable`() {
        unreadable(200, "{\"user\": {\"id\": 1, \"email\": \"a@example.com\", \"createdAt\": \"x\"}, \"session\": $session}") { signIn("a@example.com", "pw") }
        unreadable(200, "{\"user\": $user}") { signIn("a@example.com", "pw") }
        unreadable(200, "{\"user\": $user, \"session\": ${session.replace("[\"password\"]", "\"password\"")}}") { signIn("a@example.com", "pw") }
        unreadable(200, "{\"user\": $user, \"session\": ${session.replace("[\"password\"]", "[null]")}}") { signIn("a@example.com", "pw") }
        unreadable(200, """{"biometrics": {"enabled": "true", "devicePolicy": "x", "algorithms": [], "challengeTTLSeconds": 120}}""") { configuration() }
        unreadable(200, """{"biometrics": {"enabled": true, "devicePolicy": "x", "algorithms": [], "challengeTTLSeconds": 1.5}}""") { configuration() }
        unreadable(200, """{"accessToken": "t", "expiresIn": "60"}""") { issueAccessToken("s") }
        unreadable(200, """{"requests": [{"requestId": "r", "client": "c", "numbers": ["1"], "payload": {}}]}""") { pendingSignInRequests("r", "c") }
        unreadable(200, """{"registrationId": "r", "challenge": null, "expiresAt": "x"}""") { startAuthentication("r") }
    }

    @Test fun `an error body of the wrong shape is TRANSPORT, a right one keeps the server's code`() {
        unreadable(401, """{"error": {"code": 401, "message": "no"}}""") { currentSession("t") }
        unreadable(400, """{"error": "invalid_request"}""") { currentSession("t") }
        val error = expectFailure<TouchstoneException.Server> { client(418, """{"error": {"code": "teapot", "message": "short and stout"}}""").currentSession("t") }
        assertEquals("teapot", error.serverCode)
        assertEquals(TouchstoneErrorCode.SERVER, error.code)
        assertEquals("short and stout", error.message)
    }

    @Test fun `a transport that fails on its own is a typed error`() {
        val client = TouchstoneClient(FakeTransport { throw IllegalStateException("provider fault") })
        assertEquals(TransportFailure.UNREACHABLE, expectFailure<TouchstoneException.Transport> { client.configuration() }.failure)
    }

    @Test fun `an answer over the size limit is TOO_LARGE whether or not it declares its length`() {
        for (declared in listOf(true, false)) {
            ServerSocket(0).use { socket ->
                val serving = Thread {
                    socket.accept().use { connection ->
                        connection.getInputStream().read(ByteArray(4096))
                        val body = "{\"a\": \"" + "x".repeat(64 * 1024) + "\"}"
                        val head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + (if (declared) "Content-Length: ${body.length}\r\n" else "") + "Connection: close\r\n\r\n"
                        runCatching { connection.getOutputStream().apply { write(head.toByteArray()); write(body.toByteArray()); flush() } }
                    }
                }.apply { isDaemon = true; start() }
                val client = TouchstoneClient(HttpUrlConnectionTransport("http://127.0.0.1:${socket.localPort}", maxResponseBytes = 16 * 1024))
                val error = expectFailure<TouchstoneException.Transport> { client.configuration() }
                assertEquals("declared length: $declared", TransportFailure.TOO_LARGE, error.failure)
                serving.join(10_000)
            }
        }
    }

    @Test fun `a server that never answers is TIMEOUT and a closed port is UNREACHABLE`() {
        ServerSocket(0).use { socket ->
            val client = TouchstoneClient(HttpUrlConnectionTransport("http://127.0.0.1:${socket.localPort}", readTimeoutMillis = 300))
            assertEquals(TransportFailure.TIMEOUT, expectFailure<TouchstoneException.Transport> { client.configuration() }.failure)
        }
        val closedPort = ServerSocket(0).use { it.localPort }
        val client = TouchstoneClient(HttpUrlConnectionTransport("http://127.0.0.1:$closedPort"))
        assertEquals(TransportFailure.UNREACHABLE, expectFailure<TouchstoneException.Transport> { client.configuration() }.failure)
    }

    @Test fun `a hostile answer during sign-in keeps the enrolment`() {
        val server = TestServer.shared
        val phone = server.phone()
        blocking { phone.biometrics.enable(server.newAccount()) }
        val hostile = TouchstoneClient(FakeTransport { TransportResponse(200, "{\"registrationId\": 7}".toByteArray()) })
        val cut = server.phone(client = hostile, keyStore = phone.keyStore, verifier = phone.verifier, stateStore = phone.state)
        assertEquals(TransportFailure.UNREADABLE, expectFailure<TouchstoneException.Transport> { cut.biometrics.signIn("Sign in") }.failure)
        assertTrue(blocking { phone.biometrics.status() } is BiometricLogin.Status.Enabled)
        assertEquals(1, phone.keyStore.tags.size)
    }
}
