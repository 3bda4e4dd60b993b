package dev.touchstone.sample

import android.app.Activity
import android.os.Bundle
import android.text.InputType
import android.view.View
import android.widget.Button
import android.widget.EditText
import android.widget.LinearLayout
import android.widget.ScrollView
import android.widget.TextView
import dev.touchstone.kit.BiometricLogin
import dev.touchstone.kit.SignInDeclineReason
import dev.touchstone.kit.SignInRequest
import dev.touchstone.kit.TouchstoneClient
import dev.touchstone.kit.TouchstoneErrorCode
import dev.touchstone.kit.TouchstoneException
import dev.touchstone.kit.TouchstoneSession
import dev.touchstone.kit.android.BiometricPromptVerifier
import dev.touchstone.kit.android.EncryptedPreferencesStateStore
import dev.touchstone.kit.android.KeystoreDeviceKeyStore
import dev.touchstone.kit.approveSignIn
import dev.touchstone.kit.confirm
import dev.touchstone.kit.declineSignIn
import dev.touchstone.kit.pendingSignInRequests
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.startCoroutine

/**
 * The sample app: password sign-in, "Enable biometric sign-in", biometric sign-in, approving a transaction
 * confirmation, and approving a sign-in on a computer by picking one of three numbers. Views are built in code so the
 * whole app is one file; the SDK calls are what a real app makes.
 */
class MainActivity : Activity() {
    private lateinit var biometrics: BiometricLogin
    private lateinit var status: TextView
    private lateinit var requests: LinearLayout
    private var session: TouchstoneSession? = null

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        val client = TouchstoneClient(SERVER_URL)
        biometrics = BiometricLogin(
            client = client,
            keyStore = KeystoreDeviceKeyStore(),
            verifier = BiometricPromptVerifier(this, negativeButtonText = "Use password"),
            stateStore = EncryptedPreferencesStateStore(this),
        )
        val column = LinearLayout(this).apply {
            orientation = LinearLayout.VERTICAL
            setPadding(48, 48, 48, 48)
        }
        status = TextView(this).apply {
            accessibilityLiveRegion = View.ACCESSIBILITY_LIVE_REGION_POLITE
            text = "Signed out"
        }
        val email = field("Email", InputType.TYPE_CLASS_TEXT or InputType.TYPE_TEXT_VARIATION_EMAIL_ADDRESS)
        val password = field("Password", InputType.TYPE_CLASS_TEXT or InputType.TYPE_TEXT_VARIATION_PASSWORD)
        val confirmationId = field("Confirmation id", InputType.TYPE_CLASS_TEXT)
        requests = LinearLayout(this).apply { orientation = LinearLayout.VERTICAL }

        column.addView(status)
        column.addView(email)
        column.addView(password)
        column.addView(button("Sign in with password") {
            session = client.signIn(email.text.toString(), password.text.toString())
            "Signed in as ${session?.user?.email}"
        })
        column.addView(button("Enable biometric sign-in") {
            val current = session ?: return@button "Sign in with your password first"
            biometrics.enable(current, deviceName = android.os.Build.MODEL)
            "Biometric sign-in is on"
        })
        column.addView(button("Sign in with biometrics") {
            session = biometrics.signIn(reason = "Sign in to Touchstone Sample")
            "Signed in as ${session?.user?.email} (biometric)"
        })
        column.addView(confirmationId)
        column.addView(button("Approve confirmation") {
            val current = session ?: return@button "Sign in first"
            val (_, request) = client.confirmationRequest(confirmationId.text.toString(), current.session.token)
            biometrics.confirm(request, promptPrefix = "Approve: ")
            "Approved: ${request.summary}"
        })
        column.addView(button("Check sign-in requests") {
            val pending = biometrics.pendingSignInRequests()
            runOnUiThread { showRequests(pending) }
            if (pending.isEmpty()) "No sign-in is waiting" else "Pick the number your computer shows"
        })
        column.addView(requests)
        setContentView(ScrollView(this).apply { addView(column) })
    }

    /** One request: who asks, the three numbers as buttons, and "It wasn't me". */
    private fun showRequests(pending: List<SignInRequest>) {
        requests.removeAllViews()
        for (request in pending) {
            requests.addView(TextView(this).apply {
                text = "${request.client} from ${request.payload.browserUserAgent ?: request.payload.bindingMessage ?: "a computer"}"
            })
            val row = LinearLayout(this).apply { orientation = LinearLayout.HORIZONTAL }
            for (number in request.numbers) {
                row.addView(button(number.toString(), description = "Number $number") {
                    biometrics.approveSignIn(request, number)
                    runOnUiThread { requests.removeAllViews() }
                    "Signed in on your computer"
                })
            }
            requests.addView(row)
            requests.addView(button("It wasn't me") {
                biometrics.declineSignIn(request, SignInDeclineReason.NOT_ME)
                runOnUiThread { requests.removeAllViews() }
                "Reported; nobody was signed in"
            })
        }
    }

    private fun field(label: String, type: Int) = EditText(this).apply {
        hint = label
        contentDescription = label
        inputType = type
    }

    /** A button that runs a suspending SDK call and shows its outcome (or the error an app would show). */
    private fun button(label: String, description: String = label, action: suspend () -> String) = Button(this).apply {
        text = label
        contentDescription = description
        setOnClickListener {
            launch(action)
        }
    }

    private fun launch(action: suspend () -> String) {
        action.startCoroutine(object : Continuation<String> {
            override val context: CoroutineContext = EmptyCoroutineContext
            override fun resumeWith(result: Result<String>) {
                val text = result.fold({ it }, { error -> explain(error) })
                runOnUiThread { status.text = text }
            }
        })
    }

    private companion object {
        /** The Touchstone server; an emulator reaches the host's loopback as 10.0.2.2 (`swift run touchstone serve`). */
        const val SERVER_URL = "http://10.0.2.2:8080"
    }

    private fun explain(error: Throwable): String = when (error) {
        is TouchstoneException.Prompt -> if (error.code == TouchstoneErrorCode.USER_FALLBACK) "Sign in with your password" else "Cancelled"
        is TouchstoneException.Enrollment -> when (error.code) {
            TouchstoneErrorCode.KEY_INVALIDATED -> "Your fingerprints or face changed: sign in with your password to turn biometrics back on"
            TouchstoneErrorCode.REGISTRATION_REVOKED, TouchstoneErrorCode.NOT_ENABLED -> "Biometric sign-in is off on this phone"
            TouchstoneErrorCode.REGISTRATION_LOCKED -> "Too many failed attempts: sign in with your password"
            else -> error.message
        }
        is TouchstoneException.Device -> when (error.code) {
            TouchstoneErrorCode.NOT_ENROLLED -> "Add a fingerprint or face in Settings first"
            TouchstoneErrorCode.LOCKED_OUT -> "Biometrics are locked: unlock your phone with its screen lock"
            else -> "This phone cannot use biometric sign-in"
        }
        is TouchstoneException.SignInRequest -> if (error.code == TouchstoneErrorCode.WRONG_NUMBER) "Wrong number: start again on your computer" else error.message
        is TouchstoneException.Transport -> "Cannot reach the server"
        is TouchstoneException -> error.message
        else -> "Something went wrong"
    }
}
