package dev.touchstone.kit

/** Why biometric sign-in is not enabled (a [TouchstoneException.Enrollment] with `NOT_ENABLED`). */
enum class NotEnabledReason {
    /** Never enabled in this app on this device, or disabled. */
    NEVER_ENABLED,
    /** The Keystore key is gone (app data restored to another phone, Keystore reset): the server was told. */
    KEY_LOST,
    /** The stored enrolment could not be decrypted (its Keystore key is gone, or the file is damaged): it was wiped. */
    STATE_UNREADABLE,
}
