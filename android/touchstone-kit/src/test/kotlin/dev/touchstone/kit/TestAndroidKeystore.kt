package dev.touchstone.kit

import java.math.BigInteger
import java.security.KeyPair
import java.security.KeyPairGenerator
import java.security.MessageDigest
import java.security.PrivateKey
import java.security.PublicKey
import java.security.SecureRandom
import java.security.Signature
import java.security.spec.ECGenParameterSpec
import java.util.Base64
import java.util.Date

/**
 * An Android Keystore made in the test (the Kotlin twin of `Tests/TouchstoneTesting/TestAndroidKeystore.swift`): a
 * root and an intermediate standing for Google's attestation root and a device's batch key, issuing attestation
 * certificates whose key description (attestation version 200, KeyMint 200) says what [Key] says, leaf first as
 * `KeyStore.getCertificateChain` returns them. The server trusts the root through `TOUCHSTONE_ANDROID_ATTESTATION_ROOTS`.
 */
class TestAndroidKeystore(private val validFrom: Date, private val validUntil: Date) {
    /** What the attestation certificate says of the key; the defaults are what Touchstone asks an app to make. */
    data class Key(
        val securityLevel: Int = 1,
        val purposes: List<Int> = listOf(2),
        val origin: Int = 0,
        val noAuthRequired: Boolean = false,
        val userAuthType: Long? = 2,
        val packageName: String = PACKAGE,
    )

    private val rootKey = newKey()
    private val intermediateKey = newKey()
    private val rootName = name("Test Android attestation root")
    private val intermediateName = name("Test batch key")
    val root: ByteArray = certificate(rootName, rootName, rootKey.public, rootKey.private, caExtensions())
    private val intermediate = certificate(rootName, intermediateName, intermediateKey.public, rootKey.private, caExtensions())

    /** The chain for [publicKey] and its attestation [challenge] (DER, leaf first). */
    fun chain(publicKey: PublicKey, challenge: ByteArray, key: Key = Key()): List<ByteArray> {
        val extension = Der.sequence(Der.oid(KEY_DESCRIPTION_OID), Der.octets(keyDescription(challenge, key)))
        val leaf = certificate(intermediateName, name("Android Keystore Key"), publicKey, intermediateKey.private, Der.sequence(extension))
        return listOf(leaf, intermediate, root)
    }

    /** The root as PEM, for `TOUCHSTONE_ANDROID_ATTESTATION_ROOTS`. */
    val rootPem: String
        get() = "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder(64, "\n".toByteArray()).encodeToString(root) + "\n-----END CERTIFICATE-----\n"

    private fun keyDescription(challenge: ByteArray, key: Key): ByteArray {
        val applicationId = Der.sequence(
            Der.set(Der.sequence(Der.octets(key.packageName.toByteArray()), Der.integer(1))),
            Der.set(Der.octets(SIGNING_CERTIFICATE_SHA256)),
        )
        val softwareEnforced = Der.sequence(Der.explicit(709, Der.octets(applicationId)))
        val hardware = ArrayList<ByteArray>()
        hardware.add(Der.explicit(1, Der.set(*key.purposes.map { Der.integer(it.toLong()) }.toTypedArray())))
        if (key.noAuthRequired) hardware.add(Der.explicit(503, Der.nul()))
        key.userAuthType?.let { hardware.add(Der.explicit(504, Der.integer(it))) }
        hardware.add(Der.explicit(702, Der.integer(key.origin.toLong())))
        return Der.sequence(
            Der.integer(200), Der.enumerated(key.securityLevel.toLong()), Der.integer(200), Der.enumerated(key.securityLevel.toLong()),
            Der.octets(challenge), Der.octets(ByteArray(0)), softwareEnforced, Der.sequence(*hardware.toTypedArray()),
        )
    }

    private fun certificate(issuer: ByteArray, subject: ByteArray, publicKey: PublicKey, issuerKey: PrivateKey, extensions: ByteArray): ByteArray {
        val algorithm = Der.sequence(Der.oid("1.2.840.10045.4.3.2"))
        val tbs = Der.sequence(
            Der.explicit(0, Der.integer(2)),
            Der.integer(BigInteger(63, random).add(BigInteger.ONE)),
            algorithm,
            issuer,
            Der.sequence(Der.utcTime(validFrom), Der.utcTime(validUntil)),
            subject,
            publicKey.encoded,
            Der.explicit(3, extensions),
        )
        val signature = Signature.getInstance("SHA256withECDSA").apply {
            initSign(issuerKey)
            update(tbs)
        }.sign()
        return Der.sequence(tbs, algorithm, Der.bitString(signature))
    }

    private fun caExtensions(): ByteArray = Der.sequence(
        Der.sequence(Der.oid("2.5.29.19"), Der.boolean(true), Der.octets(Der.sequence(Der.boolean(true)))),
        // keyUsage: keyCertSign (bit 5), two unused bits.
        Der.sequence(Der.oid("2.5.29.15"), Der.boolean(true), Der.octets(Der.bitString(byteArrayOf(0x04), unusedBits = 2))),
    )

    private fun name(commonName: String) = Der.sequence(Der.set(Der.sequence(Der.oid("2.5.4.3"), Der.utf8(commonName))))

    companion object {
        const val KEY_DESCRIPTION_OID = "1.3.6.1.4.1.11129.2.1.17"
        const val PACKAGE = "com.example.touchstone"
        private val random = SecureRandom()

        /** The test app's signing certificate digest (as `TOUCHSTONE_ANDROID_APPS` names it). */
        val SIGNING_CERTIFICATE_SHA256: ByteArray = MessageDigest.getInstance("SHA-256").digest("test signing certificate".toByteArray())

        /** `com.example.touchstone:<digest>`, the `TOUCHSTONE_ANDROID_APPS` entry of the test app. */
        val appEntry: String get() = "$PACKAGE:" + SIGNING_CERTIFICATE_SHA256.joinToString(":") { "%02X".format(it) }

        /** The app's passkey origin, `android:apk-key-hash:<base64url of the digest>`. */
        val apkKeyHashOrigin: String get() = "android:apk-key-hash:" + Base64.getUrlEncoder().withoutPadding().encodeToString(SIGNING_CERTIFICATE_SHA256)

        fun newKey(): KeyPair = KeyPairGenerator.getInstance("EC").apply { initialize(ECGenParameterSpec("secp256r1")) }.generateKeyPair()
    }
}
