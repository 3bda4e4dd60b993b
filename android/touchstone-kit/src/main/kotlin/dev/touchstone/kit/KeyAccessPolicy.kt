package dev.touchstone.kit

/**
 * When the platform lets a device key be used: the same three policies as TouchstoneKit's `KeyAccessPolicy`. The
 * key store makes the key with it, and the prompt allows exactly the authenticators it names (a prompt that allows
 * more than the key does fails at signing time).
 */
enum class KeyAccessPolicy {
    /**
     * A strong (Class 3) biometric for every use; enrolling a new fingerprint or face invalidates the key
     * (`setInvalidatedByBiometricEnrollment(true)`): the default.
     */
    BIOMETRY_CURRENT_SET,

    /** A strong biometric for every use, including ones enrolled later. */
    BIOMETRY_ANY,

    /** A strong biometric or the screen lock (PIN, pattern, password) for every use: Stytch's `allowDeviceCredentials`. */
    USER_PRESENCE,
}
