package dev.touchstone.kit.android

import android.app.KeyguardManager
import android.content.Context
import android.content.DialogInterface
import android.hardware.biometrics.BiometricManager
import android.hardware.biometrics.BiometricPrompt
import android.os.CancellationSignal
import dev.touchstone.kit.BiometryAvailability
import dev.touchstone.kit.KeyAccessPolicy
import dev.touchstone.kit.PlatformErrorMapping
import dev.touchstone.kit.TouchstoneErrorCode
import dev.touchstone.kit.TouchstoneException
import dev.touchstone.kit.UserVerifier
import java.security.Signature
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.coroutines.suspendCoroutine

/**
 * The platform `android.hardware.biometrics.BiometricPrompt` with a `CryptoObject`: the [Signature] the key store
 * initialised is what the prompt unlocks, and what [verifyUser] returns from `onAuthenticationSucceeded`. The allowed
 * authenticators are those of the key's policy ([KeystoreDeviceKeyStore.authenticators]).
 *
 * @param context An Activity's context (the prompt shows over it).
 * @param negativeButtonText The button that leads to the password or the app PIN (`USER_FALLBACK`); not shown when the
 * screen lock is allowed (the system then offers it instead).
 * @param subtitle Shown under the title (the title is the SDK's `reason`).
 */
class BiometricPromptVerifier(
    private val context: Context,
    private val negativeButtonText: String = "Use password",
    private val subtitle: String? = null,
) : UserVerifier {
    override suspend fun availability(policy: KeyAccessPolicy): BiometryAvailability {
        val manager = context.getSystemService(BiometricManager::class.java) ?: return BiometryAvailability.NotAvailable
        val keyguard = context.getSystemService(KeyguardManager::class.java)
        val status = manager.canAuthenticate(KeystoreDeviceKeyStore.authenticators(policy))
        return PlatformErrorMapping.availability(status, keyguard?.isDeviceSecure ?: false)
    }

    override suspend fun verifyUser(reason: String, signature: Signature, policy: KeyAccessPolicy): Signature = suspendCoroutine { continuation ->
        val done = AtomicBoolean(false)
        fun finish(result: Result<Signature>) {
            if (done.compareAndSet(false, true)) result.fold({ continuation.resume(it) }, { continuation.resumeWithException(it) })
        }
        val executor = context.mainExecutor
        val builder = BiometricPrompt.Builder(context)
            .setTitle(reason)
            .setAllowedAuthenticators(KeystoreDeviceKeyStore.authenticators(policy))
            .setConfirmationRequired(false)
        if (subtitle != null) builder.setSubtitle(subtitle)
        if (policy != KeyAccessPolicy.USER_PRESENCE) {
            builder.setNegativeButton(negativeButtonText, executor, DialogInterface.OnClickListener { _, _ ->
                finish(Result.failure(TouchstoneException.Prompt(TouchstoneErrorCode.USER_FALLBACK, "the user chose \"$negativeButtonText\"")))
            })
        }
        val callback = object : BiometricPrompt.AuthenticationCallback() {
            override fun onAuthenticationSucceeded(result: BiometricPrompt.AuthenticationResult) {
                val unlocked: Signature? = result.cryptoObject?.signature
                finish(if (unlocked != null) Result.success(unlocked) else Result.failure(TouchstoneException.Internal("the prompt returned no signature")))
            }

            override fun onAuthenticationError(errorCode: Int, errString: CharSequence) {
                finish(Result.failure(PlatformErrorMapping.promptError(errorCode, errString.toString())))
            }
            // onAuthenticationFailed: a face or finger that did not match; the prompt stays open and counts toward lockout.
        }
        executor.execute {
            try {
                builder.build().authenticate(BiometricPrompt.CryptoObject(signature), CancellationSignal(), executor, callback)
            } catch (e: RuntimeException) {
                finish(Result.failure(TouchstoneException.Internal("the prompt could not be shown: ${e.javaClass.simpleName}", e)))
            }
        }
    }
}
