package dev.touchstone.kit

/**
 * What Android's errors mean to the SDK, kept here (platform neutral, tested on the JVM) so the adapters stay thin.
 * The numbers are the documented values of `android.hardware.biometrics.BiometricPrompt.BIOMETRIC_ERROR_*` and
 * `BiometricManager.BIOMETRIC_*`; the strings are `android.credentials` exception types.
 */
object PlatformErrorMapping {
    // BiometricPrompt.BIOMETRIC_ERROR_* (API 28+; values from the Android reference).
    const val BIOMETRIC_ERROR_HW_UNAVAILABLE = 1
    const val BIOMETRIC_ERROR_UNABLE_TO_PROCESS = 2
    const val BIOMETRIC_ERROR_TIMEOUT = 3
    const val BIOMETRIC_ERROR_NO_SPACE = 4
    const val BIOMETRIC_ERROR_CANCELED = 5
    const val BIOMETRIC_ERROR_LOCKOUT = 7
    const val BIOMETRIC_ERROR_VENDOR = 8
    const val BIOMETRIC_ERROR_LOCKOUT_PERMANENT = 9
    const val BIOMETRIC_ERROR_USER_CANCELED = 10
    const val BIOMETRIC_ERROR_NO_BIOMETRICS = 11
    const val BIOMETRIC_ERROR_HW_NOT_PRESENT = 12
    const val BIOMETRIC_ERROR_NEGATIVE_BUTTON = 13
    const val BIOMETRIC_ERROR_NO_DEVICE_CREDENTIAL = 14
    const val BIOMETRIC_ERROR_SECURITY_UPDATE_REQUIRED = 15

    // BiometricManager.canAuthenticate(int) answers.
    const val BIOMETRIC_SUCCESS = 0
    const val BIOMETRIC_ERROR_NONE_ENROLLED = 11
    const val BIOMETRIC_STATUS_HW_UNAVAILABLE = 1
    const val BIOMETRIC_STATUS_NO_HARDWARE = 12
    const val BIOMETRIC_STATUS_SECURITY_UPDATE_REQUIRED = 15

    /** The SDK error for `AuthenticationCallback.onAuthenticationError(errorCode, errString)`. */
    fun promptError(errorCode: Int, message: String): TouchstoneException = when (errorCode) {
        BIOMETRIC_ERROR_USER_CANCELED -> TouchstoneException.Prompt(TouchstoneErrorCode.USER_CANCELLED, message)
        // The system dismissed it (the app went to the background, another prompt): nothing the user chose.
        BIOMETRIC_ERROR_CANCELED, BIOMETRIC_ERROR_TIMEOUT ->
            TouchstoneException.Prompt(TouchstoneErrorCode.USER_CANCELLED, "the prompt was dismissed by the system: $message")
        BIOMETRIC_ERROR_NEGATIVE_BUTTON -> TouchstoneException.Prompt(TouchstoneErrorCode.USER_FALLBACK, message)
        BIOMETRIC_ERROR_LOCKOUT, BIOMETRIC_ERROR_LOCKOUT_PERMANENT -> TouchstoneException.Device(TouchstoneErrorCode.LOCKED_OUT, message)
        BIOMETRIC_ERROR_NO_BIOMETRICS -> TouchstoneException.Device(TouchstoneErrorCode.NOT_ENROLLED, message)
        BIOMETRIC_ERROR_NO_DEVICE_CREDENTIAL -> TouchstoneException.Device(TouchstoneErrorCode.PASSCODE_NOT_SET, message)
        BIOMETRIC_ERROR_HW_UNAVAILABLE, BIOMETRIC_ERROR_HW_NOT_PRESENT, BIOMETRIC_ERROR_SECURITY_UPDATE_REQUIRED ->
            TouchstoneException.Device(TouchstoneErrorCode.NOT_AVAILABLE, message)
        else -> TouchstoneException.Internal("BiometricPrompt error $errorCode: $message")
    }

    /** What `BiometricManager.canAuthenticate(authenticators)` answering [status] means (and whether a screen lock is set). */
    fun availability(status: Int, deviceSecure: Boolean): BiometryAvailability = when {
        !deviceSecure && status != BIOMETRIC_STATUS_NO_HARDWARE -> BiometryAvailability.PasscodeNotSet
        status == BIOMETRIC_SUCCESS -> BiometryAvailability.Available
        status == BIOMETRIC_ERROR_NONE_ENROLLED -> BiometryAvailability.NotEnrolled
        else -> BiometryAvailability.NotAvailable
    }

    // android.credentials exception types (CreateCredentialException / GetCredentialException.TYPE_*).
    const val CREATE_USER_CANCELED = "android.credentials.CreateCredentialException.TYPE_USER_CANCELED"
    const val CREATE_NO_CREATE_OPTIONS = "android.credentials.CreateCredentialException.TYPE_NO_CREATE_OPTIONS"
    const val CREATE_INTERRUPTED = "android.credentials.CreateCredentialException.TYPE_INTERRUPTED"
    const val GET_USER_CANCELED = "android.credentials.GetCredentialException.TYPE_USER_CANCELED"
    const val GET_NO_CREDENTIAL = "android.credentials.GetCredentialException.TYPE_NO_CREDENTIAL"
    const val GET_INTERRUPTED = "android.credentials.GetCredentialException.TYPE_INTERRUPTED"

    /** The SDK error for a Credential Manager failure of [type]; a type this SDK does not know is `UNKNOWN`. */
    fun credentialError(type: String, message: String): TouchstoneException.Passkey = when {
        type == CREATE_USER_CANCELED || type == GET_USER_CANCELED -> TouchstoneException.Passkey(PasskeyErrorCode.CANCELLED, message)
        type == GET_NO_CREDENTIAL -> TouchstoneException.Passkey(PasskeyErrorCode.NO_CREDENTIALS, message)
        type == CREATE_NO_CREATE_OPTIONS -> TouchstoneException.Passkey(PasskeyErrorCode.NOT_HANDLED, message)
        type == CREATE_INTERRUPTED || type == GET_INTERRUPTED -> TouchstoneException.Passkey(PasskeyErrorCode.CANCELLED, "interrupted: $message")
        // androidx's DOM exceptions travel as ".../TYPE_CREATE_PUBLIC_KEY_CREDENTIAL_DOM_EXCEPTION/<name>".
        type.endsWith("InvalidStateError") -> TouchstoneException.Passkey(PasskeyErrorCode.MATCHED_EXCLUDED_CREDENTIAL, message)
        type.endsWith("NotAllowedError") -> TouchstoneException.Passkey(PasskeyErrorCode.CANCELLED, message)
        else -> TouchstoneException.Passkey(PasskeyErrorCode.UNKNOWN, "$type: $message")
    }

    /** A server or transport failure during a passkey ceremony, as TouchstoneKit's `PasskeyError(serverError:)`. */
    fun passkeyError(error: TouchstoneException): TouchstoneException.Passkey {
        if (error is TouchstoneException.Passkey) return error
        val code = when {
            error.code == TouchstoneErrorCode.TRANSPORT -> PasskeyErrorCode.TRANSPORT
            error.serverCode == "passkey_not_found" -> PasskeyErrorCode.CREDENTIAL_NOT_FOUND
            error.serverCode == "passkey_locked" -> PasskeyErrorCode.PASSKEY_LOCKED
            error.code == TouchstoneErrorCode.RATE_LIMITED -> PasskeyErrorCode.RATE_LIMITED
            else -> PasskeyErrorCode.SERVER
        }
        return TouchstoneException.Passkey(code, error.message, error.serverCode, error.httpStatus, error)
    }
}
