package dev.touchstone.kit

import java.security.Signature

/**
 * Where device private keys live: the Android Keystore, or (on the JVM and in tests) software. A private key never
 * leaves its store: the SDK asks for a [Signature] initialised with it, hands that to the [UserVerifier] (Android's
 * `BiometricPrompt` unlocks exactly that object), and signs with what the prompt returns.
 *
 * Implementations throw [TouchstoneException]: [TouchstoneErrorCode.KEY_INVALIDATED] from [signer] when the platform
 * invalidated the key (`KeyPermanentlyInvalidatedException`), `NOT_ENABLED` when the key is missing.
 */
interface DeviceKeyStore {
    /**
     * Creates an EC P-256 key under [tag] for [policy]; creating over an existing tag replaces nothing and fails.
     *
     * @param attestationChallenge When given, the key is made with it as its attestation challenge and the chain is
     * returned (when the store can attest).
     */
    suspend fun createKey(tag: String, policy: KeyAccessPolicy, attestationChallenge: ByteArray?): CreatedKey

    /** A `SHA256withECDSA` signature object initialised with the key under [tag], not yet authorised by the user. */
    suspend fun signer(tag: String): Signature

    /** Deletes the key; deleting a missing key is not an error. */
    suspend fun deleteKey(tag: String)

    /** Whether a key exists under [tag]. Never prompts. */
    suspend fun keyExists(tag: String): Boolean
}
