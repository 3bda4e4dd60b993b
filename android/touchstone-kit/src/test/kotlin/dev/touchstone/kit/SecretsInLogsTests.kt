package dev.touchstone.kit

import java.util.Collections
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Test

/** No session token, device credential, PIN, password, signature or poll secret in any line the SDK logs or prints. */
class SecretsInLogsTests {
    @Test fun `a whole phone's day logs no secret`() {
        val server = TestServer.shared
        val lines = Collections.synchronizedList(ArrayList<String>())
        val client = server.client(logger = TouchstoneLogger { lines.add(it) })
        val phone = server.phone(client = client)
        val account = server.newAccount(client)
        val registration = blocking { phone.biometrics.enable(account) }
        blocking { phone.biometrics.setPin("8642", account) }
        val session = blocking { phone.biometrics.signIn("Sign in") }
        val pinSession = blocking { phone.biometrics.signInWithPin("8642") }
        runCatching { blocking { phone.biometrics.signInWithPin("1111") } }
        val token = blocking { client.accessToken(session) }
        val confirmation = blocking { client.createConfirmation("Pay €1", token = session.session.token) }
        val approved = blocking { phone.biometrics.confirm(confirmation) }
        val started = blocking { server.client().startSignInRequest() }
        blocking { phone.biometrics.approveSignIn(started.qr) { started.number } }
        val credential = blocking { phone.state.loadDeviceCredential(registration.id) }!!

        val secrets = listOf(account.session.token, session.session.token, pinSession.session.token, token, credential, "8642", "1111",
            TestServer.PASSWORD, started.pollToken, started.qr.substringAfter("secret=").substringBefore('&'), approved.receipt)
        assertTrue("the SDK logged its requests", lines.size >= 10)
        for (line in lines) for (secret in secrets) assertFalse("'$line' holds a secret", holds(line, secret))
        // Nor do the objects an app might print.
        for (printed in listOf(session.toString(), session.session.toString(), ScannedSignIn.parse(started.qr).toString(), started.toString())) {
            for (secret in secrets) assertFalse("'$printed' holds a secret", holds(printed, secret))
        }
    }

    /**
     * Whether [text] holds [secret]. A short one (a PIN) counts only as a token of its own: random hex ids and times
     * hold any four digits by chance (CI once failed on the address "android-59c88642@example.com" and the PIN 8642).
     */
    private fun holds(text: String, secret: String): Boolean =
        if (secret.length > 6) text.contains(secret)
        else Regex("(?<![0-9A-Za-z])" + Regex.escape(secret) + "(?![0-9A-Za-z])").containsMatchIn(text)
}
