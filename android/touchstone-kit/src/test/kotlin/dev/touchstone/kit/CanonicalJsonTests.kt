package dev.touchstone.kit

import java.io.File
import org.json.JSONArray
import org.json.JSONObject
import org.json.JSONTokener
import org.junit.Assert.assertArrayEquals
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/**
 * The canonical JSON the SDK signs is the server's: the vectors the Swift tests read
 * (`Tests/TouchstoneConfirmationTests/Fixtures/canonical-json.json`), and confirmation payloads the real server makes.
 */
class CanonicalJsonTests {
    private val vectors = JSONObject(File(TestServer.repo, "Tests/TouchstoneConfirmationTests/Fixtures/canonical-json.json").readText())

    @Test fun `numbers are written as ECMAScript writes them`() {
        val numbers = vectors.getJSONArray("numbers")
        assertTrue(numbers.length() >= 30)
        for (i in 0 until numbers.length()) {
            val vector = numbers.getJSONObject(i)
            val value = java.lang.Double.longBitsToDouble(java.lang.Long.parseUnsignedLong(vector.getString("bits"), 16))
            assertEquals(vector.getString("bits"), vector.getString("text"), CanonicalJson.number(value))
        }
    }

    @Test fun `documents serialise to the same bytes as the server's serialiser`() {
        val documents = vectors.getJSONArray("documents")
        assertTrue(documents.length() >= 8)
        for (i in 0 until documents.length()) {
            val document = documents.getJSONObject(i)
            val value = JSONTokener(document.getString("json")).nextValue()
            assertArrayEquals(document.getString("name"), document.getString("canonical").toByteArray(Charsets.UTF_8), CanonicalJson.serialize(value))
        }
    }

    @Test fun `a sign-in decision's bytes are the vectors' payloads`() {
        val documents = vectors.getJSONArray("documents")
        val browser = (0 until documents.length()).map { documents.getJSONObject(it) }.single { it.getString("name") == "a browser's sign-in payload" }
        val json = JSONObject(browser.getString("json"))
        val b = json.getJSONObject("browser")
        val payload = SignInRequestPayload(json.getString("requestId"), json.getString("kind"), json.getString("rpId"), json.getString("userId"),
            json.getString("client"), json.getString("expiresAt"), b.getString("address"), b.getString("userAgent"), null, json.getInt("version"))
        assertEquals(browser.getString("canonical"), String(payload.signedBytes(SignInDecision.Approve(42)), Charsets.UTF_8))
        val decline = (0 until documents.length()).map { documents.getJSONObject(it) }.single { it.getString("name") == "a backchannel decline" }
        val backchannel = SignInRequestPayload("r2", "backchannel", "example.com", "u1", "Call centre", "x", null, null, null, 1)
        assertEquals(decline.getString("canonical"), String(backchannel.signedBytes(SignInDecision.Decline(SignInDeclineReason.NOT_ME)), Charsets.UTF_8))
    }

    @Test fun `the server's confirmation payloads are the canonical form of what the SDK reads from them`() {
        val server = TestServer.shared
        val client = server.client()
        val account = server.newAccount(client)
        val corpus = vectors.getJSONArray("confirmations")
        assertTrue(corpus.length() >= 4)
        for (i in 0 until corpus.length()) {
            val entry = corpus.getJSONObject(i)
            val request = blocking { client.createConfirmation(entry.getString("summary"), entry.getJSONObject("details"), token = account.session.token) }
            val parsed = JSONObject(request.payload)
            // The payload the server made, re-serialised by the SDK, is byte for byte what the server signs over...
            assertArrayEquals(entry.getString("summary"), request.payload.toByteArray(Charsets.UTF_8), CanonicalJson.serialize(parsed))
            // ...and it is the canonical form of the fields the SDK knows, with the details as sent.
            val expected = LinkedHashMap<String, Any?>()
            for (key in listOf("challenge", "confirmationId", "expiresAt", "rpId", "userId")) expected[key] = parsed.getString(key)
            expected["summary"] = entry.getString("summary")
            expected["details"] = entry.getJSONObject("details")
            expected["version"] = 1
            assertEquals(request.payload, CanonicalJson.string(expected))
            assertEquals(request.id, parsed.getString("confirmationId"))
        }
    }

    @Test fun `values that have no JSON form are refused`() {
        for (value in listOf(Double.NaN, Double.POSITIVE_INFINITY, Any())) {
            try {
                CanonicalJson.serialize(value)
                throw AssertionError("serialised $value")
            } catch (e: IllegalArgumentException) {
                // expected
            }
        }
        assertEquals("[]", CanonicalJson.string(JSONArray()))
    }
}
