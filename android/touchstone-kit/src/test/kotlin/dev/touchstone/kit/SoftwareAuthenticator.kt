package dev.touchstone.kit

import java.io.ByteArrayOutputStream
import java.math.BigInteger
import java.nio.ByteBuffer
import java.security.KeyPair
import java.security.MessageDigest
import java.security.SecureRandom
import java.security.Signature
import java.security.interfaces.ECPublicKey
import java.util.Base64
import org.json.JSONArray
import org.json.JSONObject

/**
 * A passkey provider in software that answers as Android's Credential Manager does: `RegistrationResponseJSON` with
 * a `none` attestation, `AuthenticationResponseJSON`, and `clientDataJSON` whose origin is the app's
 * `android:apk-key-hash:` origin. It reads the server's options JSON exactly as a provider would.
 */
class SoftwareAuthenticator(private val origin: String = TestAndroidKeystore.apkKeyHashOrigin) : PasskeyAuthorizer {
    private class Credential(val id: ByteArray, val rpId: String, val userHandle: ByteArray, val key: KeyPair, var counter: Int = 0)

    private val credentials = ArrayList<Credential>()
    private val random = SecureRandom()

    /** The options each call received, for tests that check them. */
    val seenOptions = ArrayList<JSONObject>()

    override suspend fun register(options: JSONObject): JSONObject {
        seenOptions.add(options)
        val rpId = options.getJSONObject("rp").getString("id")
        val excluded = options.optJSONArray("excludeCredentials")?.let { list -> (0 until list.length()).map { list.getJSONObject(it).getString("id") } } ?: emptyList()
        if (credentials.any { it.rpId == rpId && b64(it.id) in excluded }) {
            throw TouchstoneException.Passkey(PasskeyErrorCode.MATCHED_EXCLUDED_CREDENTIAL, "a passkey for this account is already here")
        }
        val algorithms = options.getJSONArray("pubKeyCredParams").let { list -> (0 until list.length()).map { list.getJSONObject(it).getInt("alg") } }
        if (-7 !in algorithms) throw TouchstoneException.Passkey(PasskeyErrorCode.NOT_HANDLED, "ES256 is not offered")
        val credential = Credential(ByteArray(16).also(random::nextBytes), rpId, unb64(options.getJSONObject("user").getString("id")), TestAndroidKeystore.newKey())
        credentials.add(credential)
        val clientData = clientData("webauthn.create", options.getString("challenge"))
        val point = credential.key.public as ECPublicKey
        val coseKey = Cbor.map(listOf(
            Cbor.int(1) to Cbor.int(2), Cbor.int(3) to Cbor.int(-7), Cbor.int(-1) to Cbor.int(1),
            Cbor.int(-2) to Cbor.bytes(unsigned32(point.w.affineX)), Cbor.int(-3) to Cbor.bytes(unsigned32(point.w.affineY)),
        ))
        val authData = Der.concat(sha256(rpId.toByteArray()), byteArrayOf((FLAGS_UP_UV_BE_BS.toInt() or 0x40).toByte()), ByteArray(4), ByteArray(16),
            byteArrayOf((credential.id.size shr 8).toByte(), credential.id.size.toByte()), credential.id, coseKey)
        val attestation = Cbor.map(listOf(Cbor.text("fmt") to Cbor.text("none"), Cbor.text("attStmt") to Cbor.map(emptyList()), Cbor.text("authData") to Cbor.bytes(authData)))
        return JSONObject()
            .put("id", b64(credential.id)).put("rawId", b64(credential.id)).put("type", "public-key")
            .put("authenticatorAttachment", "platform").put("clientExtensionResults", JSONObject())
            .put("response", JSONObject().put("clientDataJSON", b64(clientData)).put("attestationObject", b64(attestation))
                .put("transports", JSONArray(listOf("internal", "hybrid"))))
    }

    override suspend fun authenticate(options: JSONObject): JSONObject {
        seenOptions.add(options)
        val rpId = options.optString("rpId", "localhost")
        val allowed = options.optJSONArray("allowCredentials")?.let { list -> (0 until list.length()).map { list.getJSONObject(it).getString("id") } }
        val credential = credentials.lastOrNull { it.rpId == rpId && (allowed.isNullOrEmpty() || b64(it.id) in allowed) }
            ?: throw TouchstoneException.Passkey(PasskeyErrorCode.NO_CREDENTIALS, "no passkey for $rpId on this device")
        credential.counter += 1
        val clientData = clientData("webauthn.get", options.getString("challenge"))
        val authData = Der.concat(sha256(rpId.toByteArray()), byteArrayOf(FLAGS_UP_UV_BE_BS), ByteBuffer.allocate(4).putInt(credential.counter).array())
        val signature = Signature.getInstance("SHA256withECDSA").apply {
            initSign(credential.key.private)
            update(authData)
            update(sha256(clientData))
        }.sign()
        return JSONObject()
            .put("id", b64(credential.id)).put("rawId", b64(credential.id)).put("type", "public-key")
            .put("authenticatorAttachment", "platform").put("clientExtensionResults", JSONObject())
            .put("response", JSONObject().put("clientDataJSON", b64(clientData)).put("authenticatorData", b64(authData))
                .put("signature", b64(signature)).put("userHandle", b64(credential.userHandle)))
    }

    private fun clientData(type: String, challenge: String): ByteArray =
        JSONObject().put("type", type).put("challenge", challenge).put("origin", origin)
            .put("androidPackageName", TestAndroidKeystore.PACKAGE).toString().toByteArray()

    private companion object {
        /** UP, UV, BE and BS: a synced passkey, as Google Password Manager makes them. */
        const val FLAGS_UP_UV_BE_BS: Byte = (0x01 or 0x04 or 0x08 or 0x10).toByte()

        fun b64(bytes: ByteArray): String = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes)
        fun unb64(text: String): ByteArray = Base64.getUrlDecoder().decode(text)
        fun sha256(bytes: ByteArray): ByteArray = MessageDigest.getInstance("SHA-256").digest(bytes)
        fun unsigned32(value: BigInteger): ByteArray {
            val bytes = value.toByteArray().dropWhile { it == 0.toByte() }.toByteArray()
            return ByteArray(32 - bytes.size) + bytes
        }
    }
}

/** The CBOR (RFC 8949) the authenticator writes: integers, byte and text strings, maps. */
object Cbor {
    private fun head(major: Int, value: Long): ByteArray {
        val out = ByteArrayOutputStream()
        val m = major shl 5
        when {
            value < 24 -> out.write(m or value.toInt())
            value < 0x100 -> { out.write(m or 24); out.write(value.toInt()) }
            value < 0x10000 -> { out.write(m or 25); out.write((value shr 8).toInt()); out.write((value and 0xFF).toInt()) }
            else -> { out.write(m or 26); out.write(ByteBuffer.allocate(4).putInt(value.toInt()).array()) }
        }
        return out.toByteArray()
    }

    fun int(value: Long): ByteArray = if (value >= 0) head(0, value) else head(1, -1 - value)
    fun int(value: Int) = int(value.toLong())
    fun bytes(value: ByteArray) = head(2, value.size.toLong()) + value
    fun text(value: String) = value.toByteArray().let { head(3, it.size.toLong()) + it }
    fun map(entries: List<Pair<ByteArray, ByteArray>>): ByteArray = Der.concat(head(5, entries.size.toLong()), *entries.flatMap { listOf(it.first, it.second) }.toTypedArray())
}
