package dev.touchstone.kit.android

import android.app.Activity
import android.credentials.CreateCredentialException
import android.credentials.CreateCredentialRequest
import android.credentials.CreateCredentialResponse
import android.credentials.CredentialManager
import android.credentials.CredentialOption
import android.credentials.GetCredentialException
import android.credentials.GetCredentialRequest
import android.credentials.GetCredentialResponse
import android.os.Build
import android.os.Bundle
import android.os.CancellationSignal
import android.os.OutcomeReceiver
import dev.touchstone.kit.PasskeyAuthorizer
import dev.touchstone.kit.PasskeyErrorCode
import dev.touchstone.kit.PlatformErrorMapping
import dev.touchstone.kit.TouchstoneException
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.coroutines.suspendCoroutine
import org.json.JSONException
import org.json.JSONObject

/**
 * Passkeys through the platform `android.credentials.CredentialManager` (Android 14, API 34+): the server's options
 * JSON goes in as androidx.credentials' public-key request bundle, and the response JSON comes back for the server.
 * The app's origin is `android:apk-key-hash:<base64url SHA-256 of its signing certificate>`, which the server accepts
 * for the apps in `TOUCHSTONE_ANDROID_APPS` (and serves their `assetlinks.json`).
 *
 * Below API 34 every call fails with [PasskeyErrorCode.NOT_HANDLED]: use androidx.credentials (its Play services
 * back end reaches Android 9) with the same JSON, or offer biometric sign-in and the password (docs/android.md).
 */
class CredentialManagerPasskeyAuthorizer(private val activity: Activity) : PasskeyAuthorizer {
    override suspend fun register(options: JSONObject): JSONObject {
        val manager = manager()
        val data = Bundle().apply {
            putString(BUNDLE_KEY_SUBTYPE, SUBTYPE_CREATE)
            putString(BUNDLE_KEY_REQUEST_JSON, options.toString())
        }
        val request = CreateCredentialRequest.Builder(TYPE_PUBLIC_KEY_CREDENTIAL, data, data)
            .setIsSystemProviderRequired(false)
            .build()
        val response = suspendCoroutine<CreateCredentialResponse> { continuation ->
            manager.createCredential(activity, request, CancellationSignal(), activity.mainExecutor,
                object : OutcomeReceiver<CreateCredentialResponse, CreateCredentialException> {
                    override fun onResult(result: CreateCredentialResponse) = continuation.resume(result)
                    override fun onError(error: CreateCredentialException) =
                        continuation.resumeWithException(PlatformErrorMapping.credentialError(error.type, error.message ?: error.type))
                })
        }
        return json(response.data.getString(BUNDLE_KEY_REGISTRATION_RESPONSE_JSON))
    }

    override suspend fun authenticate(options: JSONObject): JSONObject {
        val manager = manager()
        val data = Bundle().apply {
            putString(BUNDLE_KEY_SUBTYPE, SUBTYPE_GET)
            putString(BUNDLE_KEY_REQUEST_JSON, options.toString())
        }
        val option = CredentialOption.Builder(TYPE_PUBLIC_KEY_CREDENTIAL, data, data).build()
        val request = GetCredentialRequest.Builder(Bundle()).addCredentialOption(option).build()
        val response = suspendCoroutine<GetCredentialResponse> { continuation ->
            manager.getCredential(activity, request, CancellationSignal(), activity.mainExecutor,
                object : OutcomeReceiver<GetCredentialResponse, GetCredentialException> {
                    override fun onResult(result: GetCredentialResponse) = continuation.resume(result)
                    override fun onError(error: GetCredentialException) =
                        continuation.resumeWithException(PlatformErrorMapping.credentialError(error.type, error.message ?: error.type))
                })
        }
        val credential = response.credential
        if (credential.type != TYPE_PUBLIC_KEY_CREDENTIAL) {
            throw TouchstoneException.Passkey(PasskeyErrorCode.INVALID_RESPONSE, "Credential Manager returned a ${credential.type}")
        }
        return json(credential.data.getString(BUNDLE_KEY_AUTHENTICATION_RESPONSE_JSON))
    }

    private fun manager(): CredentialManager {
        if (Build.VERSION.SDK_INT < Build.VERSION_CODES.UPSIDE_DOWN_CAKE) {
            throw TouchstoneException.Passkey(PasskeyErrorCode.NOT_HANDLED, "passkeys through the platform Credential Manager need Android 14")
        }
        return activity.getSystemService(CredentialManager::class.java)
            ?: throw TouchstoneException.Passkey(PasskeyErrorCode.NOT_HANDLED, "this device has no Credential Manager")
    }

    private fun json(text: String?): JSONObject = try {
        JSONObject(text ?: throw JSONException("no response JSON"))
    } catch (e: JSONException) {
        throw TouchstoneException.Passkey(PasskeyErrorCode.INVALID_RESPONSE, "the passkey provider's answer is not JSON", cause = e)
    }

    private companion object {
        // androidx.credentials' bundle keys, which the platform's providers read and write.
        const val TYPE_PUBLIC_KEY_CREDENTIAL = "androidx.credentials.TYPE_PUBLIC_KEY_CREDENTIAL"
        const val BUNDLE_KEY_SUBTYPE = "androidx.credentials.BUNDLE_KEY_SUBTYPE"
        const val BUNDLE_KEY_REQUEST_JSON = "androidx.credentials.BUNDLE_KEY_REQUEST_JSON"
        const val SUBTYPE_CREATE = "androidx.credentials.BUNDLE_VALUE_SUBTYPE_CREATE_PUBLIC_KEY_CREDENTIAL_REQUEST"
        const val SUBTYPE_GET = "androidx.credentials.BUNDLE_VALUE_SUBTYPE_GET_PUBLIC_KEY_CREDENTIAL_OPTION"
        const val BUNDLE_KEY_REGISTRATION_RESPONSE_JSON = "androidx.credentials.BUNDLE_KEY_REGISTRATION_RESPONSE_JSON"
        const val BUNDLE_KEY_AUTHENTICATION_RESPONSE_JSON = "androidx.credentials.BUNDLE_KEY_AUTHENTICATION_RESPONSE_JSON"
    }
}
