package dev.touchstone.kit

import java.security.Signature

/**
 * The biometric prompt: Android's `BiometricPrompt` with a `CryptoObject`, or a scripted one in tests.
 */
interface UserVerifier {
    /** What the device can do now for [policy]. Never prompts. */
    suspend fun availability(policy: KeyAccessPolicy): BiometryAvailability

    /**
     * Shows the prompt with [reason] and returns [signature] authorised for one use (on Android, the object the
     * prompt's `AuthenticationResult` carries).
     *
     * @throws TouchstoneException [TouchstoneErrorCode.USER_CANCELLED], `USER_FALLBACK`, `LOCKED_OUT`, `NOT_ENROLLED`...
     */
    suspend fun verifyUser(reason: String, signature: Signature, policy: KeyAccessPolicy): Signature
}
