package dev.touchstone.kit

import java.io.File
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/** The Android SDK's error codes are TouchstoneKit's, and the server codes it maps are the ones docs/api.md documents. */
class ErrorCodeTableTests {
    private fun swift(path: String) = File(TestServer.repo, path).readText()

    /** The `case` names of a Swift enum declared as `enum Code: String` in [source], in order. */
    private fun swiftCases(source: String, after: String): List<String> {
        val body = source.substringAfter(after).substringBefore("\n    }")
        return Regex("""^\s*case (\w+)\s*$""", RegexOption.MULTILINE).findAll(body).map { it.groupValues[1] }.toList()
    }

    @Test fun `the codes are TouchstoneKit's, in its order`() {
        val cases = swiftCases(swift("Sources/TouchstoneKit/Core/BiometricLoginError.swift"), "public enum Code: String")
        assertTrue(cases.size >= 25)
        assertEquals(cases, TouchstoneErrorCode.values().map { it.swiftName })
        val passkey = swiftCases(swift("Sources/TouchstoneKit/Core/PasskeyLogin.swift"), "public enum Code: String")
        assertEquals(passkey, PasskeyErrorCode.values().map { it.swiftName })
    }

    @Test fun `the server codes mapped are TouchstoneKit's table, each documented in docs api md`() {
        val source = swift("Sources/TouchstoneKit/Transport/TouchstoneClient.swift").substringAfter("static let errorCodes").substringBefore("]\n")
        val swiftTable = Regex(""""(\w+)": \.(\w+)""").findAll(source).associate { it.groupValues[1] to it.groupValues[2] }
        assertTrue(swiftTable.size >= 13)
        assertEquals(swiftTable, TouchstoneClient.errorCodes.mapValues { it.value.swiftName })
        val api = swift("docs/api.md")
        for (code in TouchstoneClient.errorCodes.keys) assertTrue("$code is in docs/api.md", api.contains("`$code`"))
    }

    @Test fun `every code has one exception group`() {
        for (code in TouchstoneErrorCode.values()) {
            val error = TouchstoneException.of(code, "m", "server_code", 400)
            assertEquals(code, error.code)
        }
        assertEquals(TouchstoneErrorCode.TRANSPORT, TouchstoneException.Transport(TransportFailure.TIMEOUT, "m").code)
        assertEquals("keyInvalidated (x): m", TouchstoneException.of(TouchstoneErrorCode.KEY_INVALIDATED, "m", "x").toString())
    }
}
