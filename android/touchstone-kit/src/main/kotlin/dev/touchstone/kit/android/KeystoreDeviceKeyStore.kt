package dev.touchstone.kit.android

import android.security.keystore.KeyGenParameterSpec
import android.security.keystore.KeyPermanentlyInvalidatedException
import android.security.keystore.KeyProperties
import android.security.keystore.StrongBoxUnavailableException
import dev.touchstone.kit.CreatedKey
import dev.touchstone.kit.CreatedProofKey
import dev.touchstone.kit.DeviceKeyStore
import dev.touchstone.kit.KeyAccessPolicy
import dev.touchstone.kit.NotEnabledReason
import dev.touchstone.kit.ProofKeyPublicKey
import dev.touchstone.kit.ProofKeyStore
import dev.touchstone.kit.TouchstoneErrorCode
import dev.touchstone.kit.TouchstoneException
import dev.touchstone.kit.onBackground
import java.security.KeyPairGenerator
import java.security.KeyStore
import java.security.PrivateKey
import java.security.Signature
import java.security.interfaces.ECPublicKey
import java.security.spec.ECGenParameterSpec

/**
 * Device keys in the Android Keystore: EC P-256 (`secp256r1`, `SHA256withECDSA`), for signing only, usable only after
 * the user authenticates for each use (`setUserAuthenticationParameters(0, ...)`), attested when the server gave a
 * challenge. StrongBox is tried first and the TEE used when StrongBox is missing or fails to generate (devices that
 * advertise StrongBox and then fail are common).
 *
 * Authenticators by [KeyAccessPolicy]: `BIOMETRY_CURRENT_SET` strong biometrics, invalidated by a new enrolment;
 * `BIOMETRY_ANY` strong biometrics, kept across enrolments; `USER_PRESENCE` strong biometrics or the screen lock.
 * [BiometricPromptVerifier] allows exactly the same authenticators, so the prompt never unlocks a key it cannot use.
 *
 * The proof key (DPoP, issue #43) is a second Keystore key of the same kind with no user authentication: it signs
 * every request's proof without a prompt, and still never leaves the Keystore (StrongBox tried first here too).
 *
 * @param preferStrongBox Try StrongBox first (true by default).
 */
class KeystoreDeviceKeyStore(private val preferStrongBox: Boolean = true) : DeviceKeyStore, ProofKeyStore {
    override suspend fun createKey(tag: String, policy: KeyAccessPolicy, attestationChallenge: ByteArray?): CreatedKey = onBackground {
        val keyStore = keyStore()
        if (keyStore.containsAlias(tag)) throw TouchstoneException.Internal("a key named $tag exists")
        if (preferStrongBox) {
            try {
                return@onBackground generate(tag, policy, attestationChallenge, strongBox = true)
            } catch (e: StrongBoxUnavailableException) {
                // No StrongBox on this device: the TEE below.
            } catch (e: Exception) {
                // StrongBox advertised but failing (ProviderException, KeyStoreException...): clean up, use the TEE.
                runCatching { keyStore.deleteEntry(tag) }
            }
        }
        generate(tag, policy, attestationChallenge, strongBox = false)
    }

    private fun generate(tag: String, policy: KeyAccessPolicy, challenge: ByteArray?, strongBox: Boolean): CreatedKey {
        val builder = KeyGenParameterSpec.Builder(tag, KeyProperties.PURPOSE_SIGN)
            .setAlgorithmParameterSpec(ECGenParameterSpec("secp256r1"))
            .setDigests(KeyProperties.DIGEST_SHA256)
            .setUserAuthenticationRequired(true)
            .setUserAuthenticationParameters(0, authenticators(policy))
            .setInvalidatedByBiometricEnrollment(policy == KeyAccessPolicy.BIOMETRY_CURRENT_SET)
        if (challenge != null) builder.setAttestationChallenge(challenge)
        if (strongBox) builder.setIsStrongBoxBacked(true)
        val generator = KeyPairGenerator.getInstance(KeyProperties.KEY_ALGORITHM_EC, PROVIDER)
        generator.initialize(builder.build())
        val pair = generator.generateKeyPair()
        val chain = if (challenge != null) keyStore().getCertificateChain(tag)?.map { it.encoded } else null
        return CreatedKey(pair.public.encoded, chain)
    }

    override suspend fun signer(tag: String): Signature {
        val key = keyStore().getKey(tag, null) as? PrivateKey
            ?: throw TouchstoneException.Enrollment(TouchstoneErrorCode.NOT_ENABLED, "the device key does not exist", reason = NotEnabledReason.KEY_LOST)
        val signature = Signature.getInstance("SHA256withECDSA")
        try {
            signature.initSign(key)
        } catch (e: KeyPermanentlyInvalidatedException) {
            throw TouchstoneException.Enrollment(TouchstoneErrorCode.KEY_INVALIDATED,
                "a biometric was enrolled since the key was made: sign in with your password to turn biometrics back on", cause = e)
        }
        return signature
    }

    override suspend fun createProofKey(tag: String, attestationChallenge: ByteArray?): CreatedProofKey = onBackground {
        val keyStore = keyStore()
        if (keyStore.containsAlias(tag)) throw TouchstoneException.Internal("a key named $tag exists")
        fun make(strongBox: Boolean): CreatedProofKey {
            val builder = KeyGenParameterSpec.Builder(tag, KeyProperties.PURPOSE_SIGN)
                .setAlgorithmParameterSpec(ECGenParameterSpec("secp256r1"))
                .setDigests(KeyProperties.DIGEST_SHA256)
                .setUserAuthenticationRequired(false)
            if (attestationChallenge != null) builder.setAttestationChallenge(attestationChallenge)
            if (strongBox) builder.setIsStrongBoxBacked(true)
            val generator = KeyPairGenerator.getInstance(KeyProperties.KEY_ALGORITHM_EC, PROVIDER)
            generator.initialize(builder.build())
            val publicKey = ProofKeyPublicKey.of(generator.generateKeyPair().public as ECPublicKey)
            val chain = if (attestationChallenge != null) keyStore().getCertificateChain(tag)?.map { it.encoded } else null
            return CreatedProofKey(publicKey, chain)
        }
        if (preferStrongBox) {
            try {
                return@onBackground make(strongBox = true)
            } catch (e: StrongBoxUnavailableException) {
                // No StrongBox: the TEE below.
            } catch (e: Exception) {
                runCatching { keyStore.deleteEntry(tag) }
            }
        }
        make(strongBox = false)
    }

    override suspend fun proofKeyPublicKey(tag: String): ProofKeyPublicKey? =
        (keyStore().getCertificate(tag)?.publicKey as? ECPublicKey)?.let(ProofKeyPublicKey::of)

    override suspend fun proofKeySigner(tag: String): Signature {
        val key = keyStore().getKey(tag, null) as? PrivateKey
            ?: throw TouchstoneException.Enrollment(TouchstoneErrorCode.NOT_ENABLED, "the proof key does not exist", reason = NotEnabledReason.KEY_LOST)
        return Signature.getInstance("SHA256withECDSA").apply { initSign(key) }
    }

    override suspend fun deleteProofKey(tag: String) = deleteKey(tag)

    override suspend fun deleteKey(tag: String) {
        val keyStore = keyStore()
        if (keyStore.containsAlias(tag)) keyStore.deleteEntry(tag)
    }

    override suspend fun keyExists(tag: String): Boolean = keyStore().containsAlias(tag)

    private fun keyStore(): KeyStore = KeyStore.getInstance(PROVIDER).apply { load(null) }

    internal companion object {
        const val PROVIDER = "AndroidKeyStore"

        /** The `KeyProperties.AUTH_*` (and `BiometricManager.Authenticators`) bits a policy allows. */
        fun authenticators(policy: KeyAccessPolicy): Int = when (policy) {
            KeyAccessPolicy.USER_PRESENCE -> KeyProperties.AUTH_BIOMETRIC_STRONG or KeyProperties.AUTH_DEVICE_CREDENTIAL
            else -> KeyProperties.AUTH_BIOMETRIC_STRONG
        }
    }
}
