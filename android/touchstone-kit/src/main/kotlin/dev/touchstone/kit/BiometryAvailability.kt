package dev.touchstone.kit

/** Whether the device can verify its user now, for a [KeyAccessPolicy]. */
sealed class BiometryAvailability {
    /** A strong biometric (or, for [KeyAccessPolicy.USER_PRESENCE], the screen lock) can be used. */
    object Available : BiometryAvailability()

    /** No suitable hardware (or none the app may use). */
    object NotAvailable : BiometryAvailability()

    /** Hardware, but no fingerprint or face enrolled. */
    object NotEnrolled : BiometryAvailability()

    /** No screen lock: keys that need user authentication cannot be made. */
    object PasscodeNotSet : BiometryAvailability()

    /** Too many failed attempts; the screen lock is needed first. */
    object LockedOut : BiometryAvailability()

    override fun toString(): String = javaClass.simpleName
}
