package dev.touchstone.kit

import java.io.ByteArrayOutputStream
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.URL
import java.util.concurrent.Executor
import java.util.concurrent.Executors
import java.util.concurrent.ThreadFactory

/**
 * A transport over `HttpURLConnection`, which Android and the JVM both have. The blocking exchange runs on
 * [executor] (by default a small pool of daemon threads), never on the caller's thread, so the suspending call is safe
 * from Android's main thread.
 *
 * @param baseUrl The server's origin, for example `https://auth.example.com` (a path prefix is kept).
 * @param connectTimeoutMillis How long to wait for the connection.
 * @param readTimeoutMillis How long to wait for the answer.
 * @param maxResponseBytes Larger answers are refused as [TransportFailure.TOO_LARGE] without being read whole.
 */
class HttpUrlConnectionTransport(
    baseUrl: String,
    private val connectTimeoutMillis: Int = 10_000,
    private val readTimeoutMillis: Int = 30_000,
    private val maxResponseBytes: Int = 1 shl 20,
    private val executor: Executor = sharedExecutor,
) : TouchstoneTransport {
    private val base = baseUrl.trimEnd('/')

    override val serverUrl: String get() = base

    override suspend fun send(request: TransportRequest): TransportResponse = onBackground(executor) { exchange(request) }

    private fun exchange(request: TransportRequest): TransportResponse {
        val connection = URL(base + request.path).openConnection() as HttpURLConnection
        // A body read to its end returns the connection to the keep-alive pool; only an exchange abandoned half-way
        // (an error, an answer too large) closes it.
        var complete = false
        try {
            connection.requestMethod = request.method
            connection.connectTimeout = connectTimeoutMillis
            connection.readTimeout = readTimeoutMillis
            connection.instanceFollowRedirects = false
            connection.useCaches = false
            for ((name, value) in request.headers) connection.setRequestProperty(name, value)
            val body = request.body
            if (body != null) {
                // Not streaming mode: the JDK's HttpURLConnection then drops a 401's body (it wants to retry with
                // credentials), and the error codes of 401 answers are what the SDK acts on.
                connection.doOutput = true
                connection.outputStream.use { it.write(body) }
            }
            val status = connection.responseCode
            if (connection.contentLengthLong > maxResponseBytes) throw tooLarge(status)
            val stream: InputStream? = if (status >= 400) connection.errorStream else connection.inputStream
            val bytes = stream?.use { readBounded(it, status) } ?: ByteArray(0)
            val headers = HashMap<String, String>()
            for ((name, values) in connection.headerFields) {
                if (name != null && values.isNotEmpty()) headers[name.lowercase()] = values.joinToString(", ")
            }
            complete = true
            return TransportResponse(status, bytes, headers)
        } finally {
            if (!complete) connection.disconnect()
        }
    }

    private fun readBounded(stream: InputStream, status: Int): ByteArray {
        val out = ByteArrayOutputStream()
        val buffer = ByteArray(8192)
        while (true) {
            val read = stream.read(buffer)
            if (read < 0) break
            if (out.size() + read > maxResponseBytes) throw tooLarge(status)
            out.write(buffer, 0, read)
        }
        return out.toByteArray()
    }

    private fun tooLarge(status: Int) = TouchstoneException.Transport(
        TransportFailure.TOO_LARGE, "the server's answer is larger than $maxResponseBytes bytes", httpStatus = status,
    )

    private companion object {
        val sharedExecutor: Executor = Executors.newCachedThreadPool(object : ThreadFactory {
            override fun newThread(runnable: Runnable) = Thread(runnable, "touchstone-http").apply { isDaemon = true }
        })
    }
}
