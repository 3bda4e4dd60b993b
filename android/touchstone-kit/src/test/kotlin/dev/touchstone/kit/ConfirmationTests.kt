package dev.touchstone.kit

import java.io.File
import java.security.KeyFactory
import java.security.Signature
import java.security.spec.X509EncodedKeySpec
import java.util.Base64
import java.util.concurrent.TimeUnit
import org.json.JSONObject
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/** Transaction confirmations: what you see is what you sign, with the evidence checked outside the SDK. */
class ConfirmationTests {
    private val server = TestServer.shared

    private fun enabledPhone(): Pair<TestServer.Phone, TouchstoneSession> {
        val phone = server.phone()
        val account = server.newAccount()
        blocking { phone.biometrics.enable(account) }
        return phone to account
    }

    @Test fun `an approval signs the payload the server made and its evidence verifies`() {
        val (phone, account) = enabledPhone()
        val details = JSONObject("""{"amount": "120.00", "currency": "EUR", "payee": {"name": "ACME \"Ltd\"", "iban": "DE89370400440532013000"}, "fee": 1.5}""")
        val request = blocking { phone.client.createConfirmation("Pay €120.00 to ACME Ltd", details, token = account.session.token) }
        val approved = blocking { phone.biometrics.confirm(request, promptPrefix = "Approve: ") }
        assertEquals("approved", approved.confirmation.status)
        assertEquals("biometric", approved.confirmation.method)
        assertEquals("Approve: Pay €120.00 to ACME Ltd", phone.verifier.prompts.last())
        assertEquals(3, approved.receipt.split('.').size)

        val evidence = blocking { phone.client.callWith("GET", "/v1/confirmations/${request.id}/evidence", "Bearer ${account.session.token}", null) }.getJSONObject("evidence")
        assertEquals(request.payload, evidence.getString("payload"))
        // The device key's signature over the payload's bytes, checked with java.security...
        val decoder = Base64.getUrlDecoder()
        val key = KeyFactory.getInstance("EC").generatePublic(X509EncodedKeySpec(decoder.decode(evidence.getString("publicKey"))))
        val verifier = Signature.getInstance("SHA256withECDSA").apply { initVerify(key); update(request.payload.toByteArray()) }
        assertTrue(verifier.verify(decoder.decode(evidence.getString("signature"))))
        // ...and by the server's own offline verifier.
        val file = File.createTempFile("evidence", ".json").apply { writeText(JSONObject().put("evidence", evidence).toString()) }
        val process = ProcessBuilder(TestServer.binary, "confirmation", "verify", file.path).redirectErrorStream(true).start()
        val output = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(60, TimeUnit.SECONDS))
        file.delete()
        assertEquals("touchstone confirmation verify: $output", 0, process.exitValue())

        val again = expectFailure<TouchstoneException.Confirmation> { phone.biometrics.confirm(request) }
        assertEquals(TouchstoneErrorCode.CONFIRMATION_NOT_PENDING, again.code)
    }

    @Test fun `a declined confirmation cannot be approved`() {
        val (phone, account) = enabledPhone()
        val request = blocking { phone.client.createConfirmation("Add payee Bob", token = account.session.token) }
        assertEquals("declined", blocking { phone.client.declineConfirmation(request.id, account.session.token) }.status)
        val error = expectFailure<TouchstoneException.Confirmation> { phone.biometrics.confirm(request) }
        assertEquals(TouchstoneErrorCode.CONFIRMATION_NOT_PENDING, error.code)
        assertEquals("confirmation_not_pending", error.serverCode)
    }

    @Test fun `a payload that does not say what the app shows is never signed`() {
        val (phone, account) = enabledPhone()
        val request = blocking { phone.client.createConfirmation("Pay €5 to Ana", token = account.session.token) }
        val other = blocking { server.phone().let { it.client.createConfirmation("Pay €5 to Ana", token = server.newAccount().session.token) } }
        val cases = listOf(
            request.copy(summary = "Pay €500 to Ana"),
            request.copy(id = other.id),
            other,
            request.copy(payload = "not json"),
            request.copy(payload = request.payload.replace("\"version\":1", "\"version\":2")),
            // "é" composed and decomposed look alike but are different text.
            request.copy(summary = "Pay €5 to Ana".replace("a", "a\u0301")),
        )
        for (case in cases) {
            val error = expectFailure<TouchstoneException.Confirmation> { phone.biometrics.confirm(case) }
            assertEquals(TouchstoneErrorCode.CONFIRMATION_MISMATCH, error.code)
        }
        assertEquals("no prompt was shown", listOf("Enable biometric sign-in"), phone.verifier.prompts)
        blocking { phone.biometrics.confirm(request) }
    }

    @Test fun `the confirmation read back is the one created`() {
        val (phone, account) = enabledPhone()
        val created = blocking { phone.client.createConfirmation("Close account", token = account.session.token) }
        val (info, request) = blocking { phone.client.confirmationRequest(created.id, account.session.token) }
        assertEquals("pending", info.status)
        assertEquals(created, request)
    }
}
