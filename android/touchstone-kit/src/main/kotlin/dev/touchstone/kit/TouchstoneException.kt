package dev.touchstone.kit

/**
 * The one error type of the SDK: every failure of [BiometricLogin], [PasskeyLogin] and [TouchstoneClient] is one of
 * these, grouped by what the app does about it. A UI switches over the subclass or over [code]:
 *
 * ```kotlin
 * try {
 *     val session = biometrics.signIn(reason = "Sign in to Example")
 * } catch (e: TouchstoneException) {
 *     when (e) {
 *         is TouchstoneException.Prompt -> if (e.code == TouchstoneErrorCode.USER_FALLBACK) showPasswordForm()
 *         is TouchstoneException.Enrollment -> showPasswordForm(offerBiometricsAfterwards = true)
 *         else -> showError(e.message)
 *     }
 * }
 * ```
 *
 * @property code The code shared with the Swift SDK.
 * @property serverCode The API's error code (`invalid_signature`, `challenge_expired`, ...) when the server sent one.
 * @property httpStatus The HTTP status when the server answered.
 */
sealed class TouchstoneException(
    val code: TouchstoneErrorCode,
    message: String,
    val serverCode: String? = null,
    val httpStatus: Int? = null,
    cause: Throwable? = null,
) : Exception(message, cause) {
    override val message: String get() = super.message ?: code.name

    /** The device cannot do biometrics now: [TouchstoneErrorCode.NOT_AVAILABLE], `NOT_ENROLLED`, `PASSCODE_NOT_SET`, `LOCKED_OUT`. */
    class Device(code: TouchstoneErrorCode, message: String, cause: Throwable? = null) :
        TouchstoneException(code, message, cause = cause)

    /** The user left the prompt: `USER_CANCELLED` or `USER_FALLBACK`. */
    class Prompt(code: TouchstoneErrorCode, message: String, cause: Throwable? = null) :
        TouchstoneException(code, message, cause = cause)

    /**
     * The enrolment on this device cannot be used: `NOT_ENABLED` (see [reason]), `ENABLED_FOR_ANOTHER_ACCOUNT`,
     * `REGISTRATION_REVOKED`, `KEY_INVALIDATED`, `REGISTRATION_LOCKED`, `DEVICE_CREDENTIAL_INVALID`.
     *
     * @property reason Why `NOT_ENABLED`: never enabled here, the Keystore key vanished, or the stored state could not
     * be decrypted; null for the other codes.
     */
    class Enrollment(
        code: TouchstoneErrorCode,
        message: String,
        serverCode: String? = null,
        httpStatus: Int? = null,
        val reason: NotEnabledReason? = null,
        cause: Throwable? = null,
    ) : TouchstoneException(code, message, serverCode, httpStatus, cause)

    /** The app PIN: `PIN_INCORRECT`, `PIN_DISABLED`, `PIN_NOT_SET`. */
    class Pin(code: TouchstoneErrorCode, message: String, serverCode: String? = null, httpStatus: Int? = null) :
        TouchstoneException(code, message, serverCode, httpStatus)

    /** A transaction confirmation: `CONFIRMATION_MISMATCH`, `CONFIRMATION_EXPIRED`, `CONFIRMATION_NOT_PENDING`. */
    class Confirmation(code: TouchstoneErrorCode, message: String, serverCode: String? = null, httpStatus: Int? = null) :
        TouchstoneException(code, message, serverCode, httpStatus)

    /** A sign-in request: `SIGN_IN_REQUEST_MISMATCH`, `_EXPIRED`, `_NOT_PENDING`, `WRONG_NUMBER`. */
    class SignInRequest(code: TouchstoneErrorCode, message: String, serverCode: String? = null, httpStatus: Int? = null) :
        TouchstoneException(code, message, serverCode, httpStatus)

    /** A passkey ceremony failed on the device or at the server; [passkeyCode] says how. */
    class Passkey(
        val passkeyCode: PasskeyErrorCode,
        message: String,
        serverCode: String? = null,
        httpStatus: Int? = null,
        cause: Throwable? = null,
    ) : TouchstoneException(
        when (passkeyCode) {
            PasskeyErrorCode.TRANSPORT -> TouchstoneErrorCode.TRANSPORT
            PasskeyErrorCode.RATE_LIMITED -> TouchstoneErrorCode.RATE_LIMITED
            PasskeyErrorCode.SERVER, PasskeyErrorCode.CREDENTIAL_NOT_FOUND, PasskeyErrorCode.PASSKEY_LOCKED -> TouchstoneErrorCode.SERVER
            PasskeyErrorCode.CANCELLED -> TouchstoneErrorCode.USER_CANCELLED
            else -> TouchstoneErrorCode.INTERNAL_FAILURE
        },
        message, serverCode, httpStatus, cause,
    )

    /** The server refused: `SERVER` (see [serverCode]), `RATE_LIMITED`, `SESSION_ENDED`. */
    class Server(code: TouchstoneErrorCode, message: String, serverCode: String? = null, httpStatus: Int? = null) :
        TouchstoneException(code, message, serverCode, httpStatus)

    /**
     * No usable answer: `TRANSPORT`.
     *
     * @property failure What kind: unreachable, timed out, unreadable (not JSON, wrong types, an HTML error page), or
     * too large.
     */
    class Transport(
        val failure: TransportFailure,
        message: String,
        httpStatus: Int? = null,
        cause: Throwable? = null,
    ) : TouchstoneException(TouchstoneErrorCode.TRANSPORT, message, null, httpStatus, cause)

    /** The key store or the prompt failed for another reason: `INTERNAL_FAILURE`. */
    class Internal(message: String, cause: Throwable? = null) :
        TouchstoneException(TouchstoneErrorCode.INTERNAL_FAILURE, message, cause = cause)

    override fun toString(): String =
        if (serverCode != null) "${code.swiftName} ($serverCode): $message" else "${code.swiftName}: $message"

    companion object {
        /** The exception of the right subclass for [code] (never `TRANSPORT` or a passkey code). */
        fun of(code: TouchstoneErrorCode, message: String, serverCode: String? = null, httpStatus: Int? = null): TouchstoneException =
            when (code) {
                TouchstoneErrorCode.NOT_AVAILABLE, TouchstoneErrorCode.NOT_ENROLLED, TouchstoneErrorCode.PASSCODE_NOT_SET,
                TouchstoneErrorCode.LOCKED_OUT -> Device(code, message)
                TouchstoneErrorCode.USER_CANCELLED, TouchstoneErrorCode.USER_FALLBACK -> Prompt(code, message)
                TouchstoneErrorCode.NOT_ENABLED, TouchstoneErrorCode.ENABLED_FOR_ANOTHER_ACCOUNT,
                TouchstoneErrorCode.REGISTRATION_REVOKED, TouchstoneErrorCode.KEY_INVALIDATED,
                TouchstoneErrorCode.REGISTRATION_LOCKED, TouchstoneErrorCode.DEVICE_CREDENTIAL_INVALID ->
                    Enrollment(code, message, serverCode, httpStatus,
                        reason = if (code == TouchstoneErrorCode.NOT_ENABLED) NotEnabledReason.NEVER_ENABLED else null)
                TouchstoneErrorCode.PIN_INCORRECT, TouchstoneErrorCode.PIN_DISABLED, TouchstoneErrorCode.PIN_NOT_SET ->
                    Pin(code, message, serverCode, httpStatus)
                TouchstoneErrorCode.CONFIRMATION_MISMATCH, TouchstoneErrorCode.CONFIRMATION_EXPIRED,
                TouchstoneErrorCode.CONFIRMATION_NOT_PENDING -> Confirmation(code, message, serverCode, httpStatus)
                TouchstoneErrorCode.SIGN_IN_REQUEST_MISMATCH, TouchstoneErrorCode.SIGN_IN_REQUEST_EXPIRED,
                TouchstoneErrorCode.SIGN_IN_REQUEST_NOT_PENDING, TouchstoneErrorCode.WRONG_NUMBER ->
                    SignInRequest(code, message, serverCode, httpStatus)
                TouchstoneErrorCode.SERVER, TouchstoneErrorCode.RATE_LIMITED, TouchstoneErrorCode.SESSION_ENDED ->
                    Server(code, message, serverCode, httpStatus)
                TouchstoneErrorCode.TRANSPORT -> Transport(TransportFailure.UNREADABLE, message, httpStatus)
                TouchstoneErrorCode.INTERNAL_FAILURE -> Internal(message)
            }

        internal fun notEnabled(reason: NotEnabledReason, message: String) =
            Enrollment(TouchstoneErrorCode.NOT_ENABLED, message, reason = reason)
    }
}
