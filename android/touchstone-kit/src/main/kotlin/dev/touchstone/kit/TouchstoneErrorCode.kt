package dev.touchstone.kit

/**
 * What went wrong, for a UI to switch over: the same codes, in the same order, as TouchstoneKit's
 * `BiometricLoginError.Code` (Swift), so one product's apps handle errors alike on both platforms.
 *
 * [swiftName] is the Swift case's name; a test checks that the two lists match.
 */
enum class TouchstoneErrorCode(val swiftName: String) {
    /** No biometric hardware, or the server does not allow biometric login. */
    NOT_AVAILABLE("notAvailable"),
    /** The device supports biometrics but none are enrolled (no fingerprint, no face). */
    NOT_ENROLLED("notEnrolled"),
    /** The device has no screen lock, so Keystore keys that need user authentication cannot be made. */
    PASSCODE_NOT_SET("passcodeNotSet"),
    /** Too many failed biometric attempts; the OS requires the screen lock first. */
    LOCKED_OUT("lockedOut"),
    /** The user dismissed the prompt. */
    USER_CANCELLED("userCancelled"),
    /** The user chose the prompt's negative button (for example "Use password"). */
    USER_FALLBACK("userFallback"),
    /** Biometric login is not enabled in this app on this device (never enabled, disabled, key gone, state unreadable). */
    NOT_ENABLED("notEnabled"),
    /** Another account already uses biometric login on this device. */
    ENABLED_FOR_ANOTHER_ACCOUNT("enabledForAnotherAccount"),
    /** The server revoked or replaced this device's registration; local state has been deleted. */
    REGISTRATION_REVOKED("registrationRevoked"),
    /**
     * The device key can no longer be used: a biometric was enrolled and the Keystore invalidated the key
     * (`KeyPermanentlyInvalidatedException`). The server was told and local state deleted: show "sign in with your
     * password to turn biometrics back on".
     */
    KEY_INVALIDATED("keyInvalidated"),
    /** Too many failed signatures: the server locked this registration. */
    REGISTRATION_LOCKED("registrationLocked"),
    /** The app PIN was wrong. */
    PIN_INCORRECT("pinIncorrect"),
    /** Too many wrong PINs: the PIN works again after a password sign-in. */
    PIN_DISABLED("pinDisabled"),
    /** No app PIN is set for this device. */
    PIN_NOT_SET("pinNotSet"),
    /** Too many requests or failed sign-ins; wait and try again. */
    RATE_LIMITED("rateLimited"),
    /** The session is over (signed out, revoked, expired or idle too long): sign in again. */
    SESSION_ENDED("sessionEnded"),
    /** The confirmation's payload does not say what the app asked to confirm: nothing was signed. */
    CONFIRMATION_MISMATCH("confirmationMismatch"),
    /** The confirmation is past its lifetime. */
    CONFIRMATION_EXPIRED("confirmationExpired"),
    /** The confirmation was already approved or declined. */
    CONFIRMATION_NOT_PENDING("confirmationNotPending"),
    /** The sign-in request is not what the app shows or expects: nothing was signed. */
    SIGN_IN_REQUEST_MISMATCH("signInRequestMismatch"),
    /** The sign-in request is past its lifetime. */
    SIGN_IN_REQUEST_EXPIRED("signInRequestExpired"),
    /** The sign-in request was already approved or declined. */
    SIGN_IN_REQUEST_NOT_PENDING("signInRequestNotPending"),
    /** The number picked is not the one the computer shows: the request is declined. */
    WRONG_NUMBER("wrongNumber"),
    /** No device credential is stored, or the server no longer accepts it: renew it with a session. */
    DEVICE_CREDENTIAL_INVALID("deviceCredentialInvalid"),
    /** The server answered with an error; see [TouchstoneException.serverCode]. */
    SERVER("server"),
    /** The server could not be reached or answered something unreadable. */
    TRANSPORT("transport"),
    /** The key store or the prompt failed for another reason. */
    INTERNAL_FAILURE("internalFailure"),
}
