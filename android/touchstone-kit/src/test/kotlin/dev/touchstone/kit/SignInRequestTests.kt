package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Test

/** Sign-in on a computer approved on the phone: the three numbers, the QR code, the device credential. */
class SignInRequestTests {
    private val server = TestServer.shared

    private fun enabledPhone(): Pair<TestServer.Phone, TouchstoneSession> {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        return phone to account
    }

    @Test fun `the right number approves and the browser gets one session`() {
        val (phone, account) = enabledPhone()
        val browser = server.client()
        val started = blocking { browser.startSignInRequest(email = account.user.email) }
        val request = blocking { phone.biometrics.pendingSignInRequests() }.single()
        assertEquals(started.requestId, request.requestId)
        assertEquals(3, request.numbers.toSet().size)
        assertTrue(started.number in request.numbers)
        assertTrue(request.needsNumber)
        assertEquals(account.user.id, request.payload.userId)
        blocking { phone.biometrics.approveSignIn(request, started.number) }
        assertEquals("Sign in to ${request.client}?", phone.verifier.prompts.last())
        val status = blocking { browser.signInRequestStatus(started.requestId, started.pollToken) }
        assertEquals("approved", status.status)
        assertEquals(account.user.id, status.session?.user?.id)
        assertEquals(listOf("phone_approval"), status.session?.session?.methods)
        assertNull("the session is handed out once", blocking { browser.signInRequestStatus(started.requestId, started.pollToken) }.session)
        val again = expectFailure<TouchstoneException.SignInRequest> { phone.biometrics.approveSignIn(request, started.number) }
        assertEquals(TouchstoneErrorCode.SIGN_IN_REQUEST_NOT_PENDING, again.code)
    }

    @Test fun `a wrong number is refused and declines the request`() {
        val (phone, account) = enabledPhone()
        val browser = server.client()
        val started = blocking { browser.startSignInRequest(email = account.user.email) }
        val request = blocking { phone.biometrics.pendingSignInRequests() }.single()
        val wrong = request.numbers.first { it != started.number }
        val error = expectFailure<TouchstoneException.SignInRequest> { phone.biometrics.approveSignIn(request, wrong) }
        assertEquals(TouchstoneErrorCode.WRONG_NUMBER, error.code)
        assertEquals("declined", blocking { browser.signInRequestStatus(started.requestId, started.pollToken) }.status)
    }

    @Test fun `a number that was not offered is never signed`() {
        val (phone, account) = enabledPhone()
        blocking { server.client().startSignInRequest(email = account.user.email) }
        val request = blocking { phone.biometrics.pendingSignInRequests() }.single()
        val notOffered = (0..99).first { it !in request.numbers }
        assertEquals(TouchstoneErrorCode.SIGN_IN_REQUEST_MISMATCH, expectFailure<TouchstoneException.SignInRequest> { phone.biometrics.approveSignIn(request, notOffered) }.code)
        assertEquals(TouchstoneErrorCode.SIGN_IN_REQUEST_MISMATCH, expectFailure<TouchstoneException.SignInRequest> { phone.biometrics.approveSignIn(request, null) }.code)
        val forged = request.copy(payload = request.payload.copy(userId = "someone-else"))
        assertEquals(TouchstoneErrorCode.SIGN_IN_REQUEST_MISMATCH, expectFailure<TouchstoneException.SignInRequest> { phone.biometrics.approveSignIn(forged, request.numbers[0]) }.code)
        assertEquals(listOf("Enable biometric sign-in"), phone.verifier.prompts)
    }

    @Test fun `not me and cancel decline the request`() {
        val (phone, account) = enabledPhone()
        val browser = server.client()
        for (reason in SignInDeclineReason.values()) {
            val started = blocking { browser.startSignInRequest(email = account.user.email) }
            val request = blocking { phone.biometrics.pendingSignInRequests() }.single { it.requestId == started.requestId }
            blocking { phone.biometrics.declineSignIn(request, reason) }
            assertEquals("declined", blocking { browser.signInRequestStatus(started.requestId, started.pollToken) }.status)
        }
        assertEquals(listOf("Report this sign-in", "Decline this sign-in"), phone.verifier.prompts.drop(1))
    }

    @Test fun `a scanned QR code is read for this server only and approved with the picked number`() {
        val (phone, _) = enabledPhone()
        val browser = server.client()
        // A request made without an address becomes the account's whose phone scans it.
        val started = blocking { browser.startSignInRequest() }
        val foreign = started.qr.replace(Regex("server=[^&]+"), "server=https%3A%2F%2Fevil.example")
        assertEquals(TouchstoneErrorCode.SIGN_IN_REQUEST_MISMATCH, expectFailure<TouchstoneException.SignInRequest> { phone.biometrics.signInRequest(foreign) }.code)
        assertEquals(TouchstoneErrorCode.SIGN_IN_REQUEST_MISMATCH, expectFailure<TouchstoneException.SignInRequest> { phone.biometrics.signInRequest("https://example.com/") }.code)
        var offered: List<Int>? = null
        blocking { phone.biometrics.approveSignIn(started.qr) { numbers -> offered = numbers; started.number } }
        assertTrue(started.number in offered!!)
        assertNotNull(blocking { browser.signInRequestStatus(started.requestId, started.pollToken) }.session)
    }

    @Test fun `a refused device credential is DEVICE_CREDENTIAL_INVALID until renewed`() {
        val (phone, account) = enabledPhone()
        val registrationId = blocking { phone.client.registrations(account.session.token) }.single().id
        blocking { phone.state.saveDeviceCredential("A".repeat(43), registrationId) }
        val error = expectFailure<TouchstoneException.Enrollment> { phone.biometrics.pendingSignInRequests() }
        assertEquals(TouchstoneErrorCode.DEVICE_CREDENTIAL_INVALID, error.code)
        assertEquals("invalid_device_credential", error.serverCode)
        blocking { phone.state.clearDeviceCredential() }
        assertEquals(TouchstoneErrorCode.DEVICE_CREDENTIAL_INVALID, expectFailure<TouchstoneException.Enrollment> { phone.biometrics.pendingSignInRequests() }.code)
        blocking { phone.biometrics.renewDeviceCredential(account) }
        assertTrue(blocking { phone.biometrics.pendingSignInRequests() }.isEmpty())
    }
}
