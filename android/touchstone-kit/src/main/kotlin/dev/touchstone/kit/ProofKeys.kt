package dev.touchstone.kit

import java.math.BigInteger
import java.security.MessageDigest
import java.security.Signature
import java.util.UUID
import org.json.JSONObject

/**
 * The public half of the phone's DPoP proof key (issue #43): P-256, as a JWK and its RFC 7638 thumbprint. TouchstoneKit's
 * `ProofKeyPublicKey`.
 */
class ProofKeyPublicKey(val x: ByteArray, val y: ByteArray) {
    init {
        require(x.size == 32 && y.size == 32) { "a P-256 point has 32-byte coordinates" }
    }

    /** `{"kty": "EC", "crv": "P-256", "x", "y"}`. */
    val jwk: Map<String, String> get() = mapOf("kty" to "EC", "crv" to "P-256", "x" to TouchstoneClient.base64Url(x), "y" to TouchstoneClient.base64Url(y))

    /** The JWK SHA-256 thumbprint (RFC 7638): what the server stores and tokens carry as `cnf.jkt`. */
    val thumbprint: String get() {
        val canonical = """{"crv":"P-256","kty":"EC","x":"${TouchstoneClient.base64Url(x)}","y":"${TouchstoneClient.base64Url(y)}"}"""
        return TouchstoneClient.base64Url(MessageDigest.getInstance("SHA-256").digest(canonical.toByteArray(Charsets.UTF_8)))
    }

    override fun equals(other: Any?) = other is ProofKeyPublicKey && x.contentEquals(other.x) && y.contentEquals(other.y)
    override fun hashCode() = x.contentHashCode() * 31 + y.contentHashCode()

    companion object {
        /** From a `java.security` EC public key. */
        fun of(key: java.security.interfaces.ECPublicKey): ProofKeyPublicKey =
            ProofKeyPublicKey(fixed(key.w.affineX), fixed(key.w.affineY))

        private fun fixed(value: BigInteger): ByteArray {
            val bytes = value.toByteArray().dropWhile { it == 0.toByte() }.toByteArray()
            return ByteArray(32 - bytes.size) + bytes
        }
    }
}

/**
 * A [DeviceKeyStore] that can also keep the phone's **proof key**: a second P-256 key, made at enrolment, that signs
 * DPoP proofs (RFC 9449) with no prompt, so that the sessions of this device's sign-ins work only from this device.
 * The Keystore store makes it in StrongBox where it can (the TEE otherwise), without user authentication; the
 * software store keeps it in memory. A key store that does not implement it enrols without one. TouchstoneKit's
 * `ProofKeyStore`.
 */
interface ProofKeyStore {
    /**
     * Creates a P-256 key under [tag] that needs no user authentication; creating over an existing tag fails.
     *
     * @param attestationChallenge When given, the key is made with it as its attestation challenge and the chain is
     * returned with it (when the store can attest), as [DeviceKeyStore.createKey] does for the device key.
     */
    suspend fun createProofKey(tag: String, attestationChallenge: ByteArray?): CreatedProofKey

    /** The public key under [tag]; null when there is none. */
    suspend fun proofKeyPublicKey(tag: String): ProofKeyPublicKey?

    /** A `SHA256withECDSA` signature object initialised with the proof key under [tag] (usable without a prompt). */
    suspend fun proofKeySigner(tag: String): Signature

    /** Deletes the key; deleting a missing key is not an error. */
    suspend fun deleteProofKey(tag: String)
}

/** A new proof key: its public key and, when it was attested, its chain (DER, leaf first). */
class CreatedProofKey(val publicKey: ProofKeyPublicKey, val attestationChain: List<ByteArray>?)

/** Signs DPoP proofs (RFC 9449 §4.2) and the enrolment signature with one proof key. TouchstoneKit's `DPoPProofSigner`. */
class DPoPProofSigner internal constructor(private val store: ProofKeyStore, internal val tag: String, val publicKey: ProofKeyPublicKey) {
    /**
     * A proof for one request: `typ` `dpop+jwt`, ES256, the public `jwk`; `jti`, `htm`, `htu` (the URL without query and
     * fragment), `iat` (seconds), and `ath` (the SHA-256 of [accessToken]) and `nonce` when given.
     */
    suspend fun proof(method: String, url: String, accessToken: String?, nonce: String?, issuedAtSeconds: Long, jti: String = UUID.randomUUID().toString()): String {
        val header = JSONObject().put("typ", "dpop+jwt").put("alg", "ES256").put("jwk", JSONObject(publicKey.jwk))
        val claims = JSONObject().put("jti", jti).put("htm", method).put("htu", withoutQuery(url)).put("iat", issuedAtSeconds)
        if (accessToken != null) claims.put("ath", TouchstoneClient.base64Url(MessageDigest.getInstance("SHA-256").digest(accessToken.toByteArray(Charsets.UTF_8))))
        if (nonce != null) claims.put("nonce", nonce)
        val input = part(header) + "." + part(claims)
        return input + "." + TouchstoneClient.base64Url(signRaw(input.toByteArray(Charsets.UTF_8)))
    }

    /** The raw 64-byte r‖s JWS needs (RFC 7518 §3.4) from the DER `SHA256withECDSA` gives. */
    internal suspend fun signRaw(message: ByteArray): ByteArray {
        val der = try {
            store.proofKeySigner(tag).run { update(message); sign() }
        } catch (e: TouchstoneException) {
            throw e
        } catch (e: Exception) {
            throw TouchstoneException.Internal("the proof key cannot sign: ${e.javaClass.simpleName}", e)
        }
        return derToRaw(der)
    }

    internal companion object {
        /** What both keys sign at enrolment: `<challenge>.<thumbprint>` (the server's rule; docs/api.md). */
        fun enrolmentMessage(challenge: String, proofKey: ProofKeyPublicKey?): ByteArray =
            (if (proofKey == null) challenge else "$challenge.${proofKey.thumbprint}").toByteArray(Charsets.UTF_8)

        fun withoutQuery(url: String): String = url.takeWhile { it != '?' && it != '#' }

        private fun part(json: JSONObject) = TouchstoneClient.base64Url(json.toString().replace("\\/", "/").toByteArray(Charsets.UTF_8))

        /** `SEQUENCE { INTEGER r, INTEGER s }` to r‖s, 32 bytes each. */
        fun derToRaw(der: ByteArray): ByteArray {
            fun fail(): Nothing = throw TouchstoneException.Internal("the proof key returned an unreadable signature")
            if (der.size < 8 || der[0] != 0x30.toByte()) fail()
            var at = if (der[1].toInt() and 0x80 != 0) 2 + (der[1].toInt() and 0x7F) else 2
            fun integer(): ByteArray {
                if (at + 2 > der.size || der[at] != 0x02.toByte()) fail()
                val length = der[at + 1].toInt() and 0xFF
                if (at + 2 + length > der.size || length > 33) fail()
                val value = der.copyOfRange(at + 2, at + 2 + length).dropWhile { it == 0.toByte() }.toByteArray()
                at += 2 + length
                if (value.size > 32) fail()
                return ByteArray(32 - value.size) + value
            }
            return integer() + integer()
        }
    }
}

/** The sessions a client holds that are bound to a proof key, the server's latest nonce and clock offset. */
internal class DPoPBindings {
    private val signers = java.util.concurrent.ConcurrentHashMap<String, DPoPProofSigner>()
    @Volatile var nonce: String? = null
    /** How far the server's clock is ahead of this one (milliseconds), learnt from a `Date` header after a refusal. */
    @Volatile var clockOffsetMillis: Long = 0
    /** The `Date` of the last error answer. */
    @Volatile var lastErrorDate: Long? = null

    fun bind(token: String, signer: DPoPProofSigner) { signers[token] = signer }
    fun signer(token: String): DPoPProofSigner? = signers[token]
}
