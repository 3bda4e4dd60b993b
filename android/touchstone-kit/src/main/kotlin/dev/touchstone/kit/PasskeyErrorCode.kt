package dev.touchstone.kit

/** How a passkey ceremony failed: the same codes as TouchstoneKit's `PasskeyError.Code`. */
enum class PasskeyErrorCode(val swiftName: String) {
    CANCELLED("cancelled"),
    NO_CREDENTIALS("noCredentials"),
    FAILED("failed"),
    NOT_HANDLED("notHandled"),
    INVALID_RESPONSE("invalidResponse"),
    NOT_INTERACTIVE("notInteractive"),
    MATCHED_EXCLUDED_CREDENTIAL("matchedExcludedCredential"),
    UNKNOWN("unknown"),
    CREDENTIAL_NOT_FOUND("credentialNotFound"),
    PASSKEY_LOCKED("passkeyLocked"),
    RATE_LIMITED("rateLimited"),
    SERVER("server"),
    TRANSPORT("transport"),
}
