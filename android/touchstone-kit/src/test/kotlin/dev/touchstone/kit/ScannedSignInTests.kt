package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Test

/** Reading a scanned sign-in code, and whose server it is. */
class ScannedSignInTests {
    @Test fun `a Touchstone sign-in code is read and anything else is refused`() {
        val scanned = ScannedSignIn.parse("touchstone://sign-in?request=r-1&secret=s%2Bt&server=https%3A%2F%2Fauth.example.com")!!
        assertEquals("r-1", scanned.requestId)
        assertEquals("s+t", scanned.secret)
        assertEquals("https://auth.example.com", scanned.server)
        assertFalse("the secret never shows in logs", scanned.toString().contains("s+t"))
        for (text in listOf(
            "https://sign-in?request=r&secret=s&server=x", "touchstone://other?request=r&secret=s&server=x",
            "touchstone://sign-in?secret=s&server=x", "touchstone://sign-in?request=r&server=x", "touchstone://sign-in?request=r&secret=s",
            "touchstone://sign-in?request=${"r".repeat(65)}&secret=s&server=x", "touchstone://sign-in?request=r&secret=%zz&server=x",
            "not a url at all \u0000", "",
        )) {
            assertNull(text, ScannedSignIn.parse(text))
        }
    }

    @Test fun `the same origin means scheme, host and port, default ports included`() {
        assertTrue(ScannedSignIn.sameOrigin("https://Auth.Example.com", "https://auth.example.com:443"))
        assertTrue(ScannedSignIn.sameOrigin("http://127.0.0.1:8080", "http://127.0.0.1:8080/"))
        assertFalse(ScannedSignIn.sameOrigin("http://auth.example.com", "https://auth.example.com"))
        assertFalse(ScannedSignIn.sameOrigin("https://auth.example.com.evil.test", "https://auth.example.com"))
        assertFalse(ScannedSignIn.sameOrigin("https://auth.example.com:8443", "https://auth.example.com"))
        assertFalse(ScannedSignIn.sameOrigin("javascript:alert(1)", "https://auth.example.com"))
    }
}
