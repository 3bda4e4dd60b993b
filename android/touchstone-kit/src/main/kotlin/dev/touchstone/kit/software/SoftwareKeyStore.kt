package dev.touchstone.kit.software

import dev.touchstone.kit.CreatedKey
import dev.touchstone.kit.DeviceKeyStore
import dev.touchstone.kit.KeyAccessPolicy
import dev.touchstone.kit.CreatedProofKey
import dev.touchstone.kit.NotEnabledReason
import dev.touchstone.kit.ProofKeyPublicKey
import dev.touchstone.kit.ProofKeyStore
import dev.touchstone.kit.TouchstoneErrorCode
import dev.touchstone.kit.TouchstoneException
import java.security.KeyPair
import java.security.KeyPairGenerator
import java.security.PublicKey
import java.security.Signature
import java.security.spec.ECGenParameterSpec
import java.util.concurrent.ConcurrentHashMap

/**
 * A [DeviceKeyStore] in memory with `java.security` P-256 keys: for the JVM, tests and simulated phones. It behaves as
 * the Keystore does where the SDK can tell: [invalidate] makes [signer] fail as `KeyPermanentlyInvalidatedException`
 * does after a new fingerprint, and [lose] makes a key vanish.
 *
 * @param attest Makes the attestation chain (leaf first, DER) for a new key and its challenge, as the Keystore does
 * for `setAttestationChallenge`; null: no chain.
 */
class SoftwareKeyStore(private val attest: ((PublicKey, ByteArray) -> List<ByteArray>)? = null) : DeviceKeyStore, ProofKeyStore {
    private val keys = ConcurrentHashMap<String, KeyPair>()
    private val invalidated = ConcurrentHashMap.newKeySet<String>()

    override suspend fun createKey(tag: String, policy: KeyAccessPolicy, attestationChallenge: ByteArray?): CreatedKey {
        if (keys.containsKey(tag)) throw TouchstoneException.Internal("a key named $tag exists")
        val pair = newPair()
        keys[tag] = pair
        val chain = if (attestationChallenge != null) attest?.invoke(pair.public, attestationChallenge) else null
        return CreatedKey(pair.public.encoded, chain)
    }

    override suspend fun signer(tag: String): Signature {
        val pair = keys[tag] ?: throw keyMissing()
        if (tag in invalidated) {
            throw TouchstoneException.Enrollment(TouchstoneErrorCode.KEY_INVALIDATED, "the key was invalidated by a new biometric enrolment")
        }
        return Signature.getInstance("SHA256withECDSA").apply { initSign(pair.private) }
    }

    override suspend fun deleteKey(tag: String) {
        keys.remove(tag)
        invalidated.remove(tag)
    }

    override suspend fun keyExists(tag: String): Boolean = keys.containsKey(tag)

    // Proof keys (DPoP): P-256 beside the device keys, signing without any prompt.

    private val proofKeys = ConcurrentHashMap<String, KeyPair>()

    override suspend fun createProofKey(tag: String, attestationChallenge: ByteArray?): CreatedProofKey {
        if (proofKeys.containsKey(tag)) throw TouchstoneException.Internal("a proof key named $tag exists")
        val pair = newPair()
        proofKeys[tag] = pair
        val chain = if (attestationChallenge != null) attest?.invoke(pair.public, attestationChallenge) else null
        return CreatedProofKey(ProofKeyPublicKey.of(pair.public as java.security.interfaces.ECPublicKey), chain)
    }

    override suspend fun proofKeyPublicKey(tag: String): ProofKeyPublicKey? =
        (proofKeys[tag]?.public as? java.security.interfaces.ECPublicKey)?.let(ProofKeyPublicKey::of)

    override suspend fun proofKeySigner(tag: String): Signature {
        val pair = proofKeys[tag] ?: throw keyMissing()
        return Signature.getInstance("SHA256withECDSA").apply { initSign(pair.private) }
    }

    override suspend fun deleteProofKey(tag: String) {
        proofKeys.remove(tag)
    }

    /** The tags of the proof keys held. */
    val proofTags: Set<String> get() = proofKeys.keys.toSet()

    /** The tags of the device keys held. */
    val tags: Set<String> get() = keys.keys.toSet()

    /** Acts as a new biometric enrolment does on a key made with `setInvalidatedByBiometricEnrollment(true)`. */
    fun invalidate(tag: String) {
        invalidated.add(tag)
    }

    /** Makes the key vanish (app data restored to another phone, Keystore reset). */
    fun lose(tag: String) {
        keys.remove(tag)
    }

    /** A new P-256 key pair (`secp256r1`), as the Keystore makes. */
    private fun newPair(): KeyPair = KeyPairGenerator.getInstance("EC").apply { initialize(ECGenParameterSpec("secp256r1")) }.generateKeyPair()

    private fun keyMissing() =
        TouchstoneException.Enrollment(TouchstoneErrorCode.NOT_ENABLED, "the device key does not exist", reason = NotEnabledReason.KEY_LOST)
}
