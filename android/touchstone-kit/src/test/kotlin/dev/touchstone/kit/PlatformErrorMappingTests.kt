package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Test

/** What Android's prompt and Credential Manager errors become (the adapters only pass the numbers and types on). */
class PlatformErrorMappingTests {
    @Test fun `BiometricPrompt errors map to the codes an app shows`() {
        val expected = mapOf(
            PlatformErrorMapping.BIOMETRIC_ERROR_USER_CANCELED to TouchstoneErrorCode.USER_CANCELLED,
            PlatformErrorMapping.BIOMETRIC_ERROR_CANCELED to TouchstoneErrorCode.USER_CANCELLED,
            PlatformErrorMapping.BIOMETRIC_ERROR_TIMEOUT to TouchstoneErrorCode.USER_CANCELLED,
            PlatformErrorMapping.BIOMETRIC_ERROR_NEGATIVE_BUTTON to TouchstoneErrorCode.USER_FALLBACK,
            PlatformErrorMapping.BIOMETRIC_ERROR_LOCKOUT to TouchstoneErrorCode.LOCKED_OUT,
            PlatformErrorMapping.BIOMETRIC_ERROR_LOCKOUT_PERMANENT to TouchstoneErrorCode.LOCKED_OUT,
            PlatformErrorMapping.BIOMETRIC_ERROR_NO_BIOMETRICS to TouchstoneErrorCode.NOT_ENROLLED,
            PlatformErrorMapping.BIOMETRIC_ERROR_NO_DEVICE_CREDENTIAL to TouchstoneErrorCode.PASSCODE_NOT_SET,
            PlatformErrorMapping.BIOMETRIC_ERROR_HW_UNAVAILABLE to TouchstoneErrorCode.NOT_AVAILABLE,
            PlatformErrorMapping.BIOMETRIC_ERROR_HW_NOT_PRESENT to TouchstoneErrorCode.NOT_AVAILABLE,
            PlatformErrorMapping.BIOMETRIC_ERROR_SECURITY_UPDATE_REQUIRED to TouchstoneErrorCode.NOT_AVAILABLE,
            PlatformErrorMapping.BIOMETRIC_ERROR_UNABLE_TO_PROCESS to TouchstoneErrorCode.INTERNAL_FAILURE,
            PlatformErrorMapping.BIOMETRIC_ERROR_VENDOR to TouchstoneErrorCode.INTERNAL_FAILURE,
            999 to TouchstoneErrorCode.INTERNAL_FAILURE,
        )
        for ((number, code) in expected) assertEquals("error $number", code, PlatformErrorMapping.promptError(number, "text").code)
        // The documented values (android.hardware.biometrics.BiometricPrompt).
        assertEquals(listOf(1, 2, 3, 5, 7, 9, 10, 11, 12, 14, 15), listOf(
            PlatformErrorMapping.BIOMETRIC_ERROR_HW_UNAVAILABLE, PlatformErrorMapping.BIOMETRIC_ERROR_UNABLE_TO_PROCESS,
            PlatformErrorMapping.BIOMETRIC_ERROR_TIMEOUT, PlatformErrorMapping.BIOMETRIC_ERROR_CANCELED, PlatformErrorMapping.BIOMETRIC_ERROR_LOCKOUT,
            PlatformErrorMapping.BIOMETRIC_ERROR_LOCKOUT_PERMANENT, PlatformErrorMapping.BIOMETRIC_ERROR_USER_CANCELED,
            PlatformErrorMapping.BIOMETRIC_ERROR_NO_BIOMETRICS, PlatformErrorMapping.BIOMETRIC_ERROR_HW_NOT_PRESENT,
            PlatformErrorMapping.BIOMETRIC_ERROR_NO_DEVICE_CREDENTIAL, PlatformErrorMapping.BIOMETRIC_ERROR_SECURITY_UPDATE_REQUIRED,
        ))
    }

    @Test fun `availability follows canAuthenticate and the screen lock`() {
        assertEquals(BiometryAvailability.Available, PlatformErrorMapping.availability(PlatformErrorMapping.BIOMETRIC_SUCCESS, deviceSecure = true))
        assertEquals(BiometryAvailability.NotEnrolled, PlatformErrorMapping.availability(PlatformErrorMapping.BIOMETRIC_ERROR_NONE_ENROLLED, deviceSecure = true))
        assertEquals(BiometryAvailability.NotAvailable, PlatformErrorMapping.availability(PlatformErrorMapping.BIOMETRIC_STATUS_NO_HARDWARE, deviceSecure = false))
        assertEquals(BiometryAvailability.NotAvailable, PlatformErrorMapping.availability(PlatformErrorMapping.BIOMETRIC_STATUS_HW_UNAVAILABLE, deviceSecure = true))
        assertEquals(BiometryAvailability.PasscodeNotSet, PlatformErrorMapping.availability(PlatformErrorMapping.BIOMETRIC_ERROR_NONE_ENROLLED, deviceSecure = false))
    }

    @Test fun `Credential Manager errors map to passkey codes`() {
        val expected = mapOf(
            PlatformErrorMapping.CREATE_USER_CANCELED to PasskeyErrorCode.CANCELLED,
            PlatformErrorMapping.GET_USER_CANCELED to PasskeyErrorCode.CANCELLED,
            PlatformErrorMapping.GET_NO_CREDENTIAL to PasskeyErrorCode.NO_CREDENTIALS,
            PlatformErrorMapping.CREATE_NO_CREATE_OPTIONS to PasskeyErrorCode.NOT_HANDLED,
            PlatformErrorMapping.CREATE_INTERRUPTED to PasskeyErrorCode.CANCELLED,
            "androidx.credentials.TYPE_CREATE_PUBLIC_KEY_CREDENTIAL_DOM_EXCEPTION/androidx.credentials.TYPE_INVALID_STATE_ERROR/InvalidStateError" to PasskeyErrorCode.MATCHED_EXCLUDED_CREDENTIAL,
            "android.credentials.SomethingNew" to PasskeyErrorCode.UNKNOWN,
        )
        for ((type, code) in expected) assertEquals(type, code, PlatformErrorMapping.credentialError(type, "m").passkeyCode)
    }

    @Test fun `server failures in a passkey ceremony keep their meaning`() {
        fun mapped(code: TouchstoneErrorCode, serverCode: String?) = PlatformErrorMapping.passkeyError(TouchstoneException.of(code, "m", serverCode, 400)).passkeyCode
        assertEquals(PasskeyErrorCode.CREDENTIAL_NOT_FOUND, mapped(TouchstoneErrorCode.SERVER, "passkey_not_found"))
        assertEquals(PasskeyErrorCode.PASSKEY_LOCKED, mapped(TouchstoneErrorCode.SERVER, "passkey_locked"))
        assertEquals(PasskeyErrorCode.RATE_LIMITED, mapped(TouchstoneErrorCode.RATE_LIMITED, "rate_limited"))
        assertEquals(PasskeyErrorCode.SERVER, mapped(TouchstoneErrorCode.SERVER, "invalid_passkey_registration"))
        assertEquals(PasskeyErrorCode.TRANSPORT, PlatformErrorMapping.passkeyError(TouchstoneException.Transport(TransportFailure.TIMEOUT, "m")).passkeyCode)
    }
}
