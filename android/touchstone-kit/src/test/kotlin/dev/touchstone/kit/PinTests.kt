package dev.touchstone.kit

import java.util.Collections
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/** The app PIN: set, sign in, wrong, disabled, the prompt's fallback to it. */
class PinTests {
    private val server = TestServer.shared

    @Test fun `a PIN signs in, a wrong one is PIN_INCORRECT, three disable it`() {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        assertEquals("set", blocking { phone.biometrics.setPin("4821", account) }.pin)
        val session = blocking { phone.biometrics.signInWithPin("4821") }
        assertEquals(listOf("pin"), session.session.methods)
        repeat(2) { assertEquals(TouchstoneErrorCode.PIN_INCORRECT, expectFailure<TouchstoneException.Pin> { phone.biometrics.signInWithPin("0000") }.code) }
        expectFailure<TouchstoneException.Pin> { phone.biometrics.signInWithPin("0000") }
        val disabled = expectFailure<TouchstoneException.Pin> { phone.biometrics.signInWithPin("4821") }
        assertEquals(TouchstoneErrorCode.PIN_DISABLED, disabled.code)
        // A password sign-in re-enables it.
        blocking { phone.client.signIn(account.user.email, TestServer.PASSWORD) }
        blocking { phone.biometrics.signInWithPin("4821") }
    }

    @Test fun `without a PIN signing in with one is PIN_NOT_SET`() {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        val error = expectFailure<TouchstoneException.Pin> { phone.biometrics.signInWithPin("1234") }
        assertEquals(TouchstoneErrorCode.PIN_NOT_SET, error.code)
        assertEquals("pin_not_set", error.serverCode)
        blocking { phone.biometrics.setPin("1234", account) }
        blocking { phone.biometrics.removePin(account) }
        assertEquals(TouchstoneErrorCode.PIN_NOT_SET, expectFailure<TouchstoneException.Pin> { phone.biometrics.signInWithPin("1234") }.code)
    }

    @Test fun `the prompt's fallback asks for the PIN until it is right`() {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        blocking { phone.biometrics.setPin("7319", account) }
        phone.verifier.fail(TouchstoneException.Prompt(TouchstoneErrorCode.USER_FALLBACK, "Use PIN"))
        val asked = Collections.synchronizedList(ArrayList<PinRequest>())
        val session = blocking {
            phone.biometrics.signIn("Sign in", pinFallback = PinProvider { request ->
                asked.add(request)
                if (request.attempt == 1) "1111" else "7319"
            })
        }
        assertEquals(listOf("pin"), session.session.methods)
        assertEquals(listOf(1, 2), asked.map { it.attempt })
        assertEquals(TouchstoneErrorCode.USER_FALLBACK, asked[0].trigger)
        assertEquals(TouchstoneErrorCode.PIN_INCORRECT, asked[1].previousError?.code)
    }

    @Test fun `a lockout without a PIN is LOCKED_OUT and a PIN provider that gives up returns the trigger`() {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        phone.verifier.fail(TouchstoneException.Device(TouchstoneErrorCode.LOCKED_OUT, "locked"))
        assertEquals(TouchstoneErrorCode.LOCKED_OUT, expectFailure<TouchstoneException.Device> { phone.biometrics.signIn("Sign in", pinFallback = PinProvider { "1234" }) }.code)
        blocking { phone.biometrics.setPin("1234", account) }
        phone.verifier.fail(TouchstoneException.Device(TouchstoneErrorCode.LOCKED_OUT, "locked"))
        val error = expectFailure<TouchstoneException.Device> { phone.biometrics.signIn("Sign in", pinFallback = PinProvider { null }) }
        assertEquals(TouchstoneErrorCode.LOCKED_OUT, error.code)
        assertTrue(blocking { phone.biometrics.status() } is BiometricLogin.Status.Enabled)
    }
}
