package dev.touchstone.kit

import java.security.GeneralSecurityException
import java.util.Base64
import java.util.UUID
import javax.crypto.Cipher
import javax.crypto.SecretKey
import javax.crypto.spec.GCMParameterSpec

/**
 * A [LocalStateStore] that seals every value with AES-GCM under [key] (on Android a Keystore AES key that needs no
 * user authentication, so reading state never prompts) before it reaches [backing]. Each value is bound to its name
 * as associated data, so values cannot be swapped between entries.
 *
 * A value that cannot be opened (the key was lost with a backup restore or a Keystore reset, or the file is damaged)
 * raises [LocalStateUnreadableException]; nothing is ever returned half-read.
 *
 * @param key Returns the sealing key; it may throw (a Keystore that cannot give it counts as unreadable).
 */
class SealedStateStore(private val backing: KeyValueStore, private val key: () -> SecretKey) : LocalStateStore {
    private val lock = Any()

    override suspend fun loadEnrollment(): LocalEnrollment? {
        val text = open(ENROLLMENT) ?: return null
        return try {
            LocalEnrollment.fromJson(text)
        } catch (e: MalformedAnswer) {
            throw LocalStateUnreadableException("the stored enrolment is damaged", e)
        }
    }

    override suspend fun saveEnrollment(enrollment: LocalEnrollment) = seal(ENROLLMENT, enrollment.toJson())

    override suspend fun clearEnrollment() = synchronized(lock) { backing.remove(ENROLLMENT) }

    override suspend fun deviceId(): String = synchronized(lock) {
        open(DEVICE_ID) ?: UUID.randomUUID().toString().also { seal(DEVICE_ID, it) }
    }

    override suspend fun loadDeviceCredential(registrationId: String): String? {
        val text = open(DEVICE_CREDENTIAL) ?: return null
        val stored = text.split('\n')
        if (stored.size != 2) throw LocalStateUnreadableException("the stored device credential is damaged")
        return if (stored[0] == registrationId) stored[1] else null
    }

    override suspend fun saveDeviceCredential(credential: String, registrationId: String) =
        seal(DEVICE_CREDENTIAL, "$registrationId\n$credential")

    override suspend fun clearDeviceCredential() = synchronized(lock) { backing.remove(DEVICE_CREDENTIAL) }

    override suspend fun wipe() = synchronized(lock) { backing.clear() }

    private fun seal(name: String, value: String) {
        val cipher = Cipher.getInstance(TRANSFORMATION)
        // The cipher draws the IV itself (Android Keystore keys refuse a caller's IV for encryption).
        cipher.init(Cipher.ENCRYPT_MODE, key())
        cipher.updateAAD(name.toByteArray(Charsets.UTF_8))
        val sealed = cipher.doFinal(value.toByteArray(Charsets.UTF_8))
        val encoder = Base64.getEncoder()
        synchronized(lock) { backing.put(name, "v1.${encoder.encodeToString(cipher.iv)}.${encoder.encodeToString(sealed)}") }
    }

    private fun open(name: String): String? {
        val stored = synchronized(lock) { backing.get(name) } ?: return null
        val parts = stored.split('.')
        if (parts.size != 3 || parts[0] != "v1") throw LocalStateUnreadableException("the stored '$name' is damaged")
        try {
            val iv = Base64.getDecoder().decode(parts[1])
            val sealed = Base64.getDecoder().decode(parts[2])
            val cipher = Cipher.getInstance(TRANSFORMATION)
            cipher.init(Cipher.DECRYPT_MODE, key(), GCMParameterSpec(128, iv))
            cipher.updateAAD(name.toByteArray(Charsets.UTF_8))
            return String(cipher.doFinal(sealed), Charsets.UTF_8)
        } catch (e: GeneralSecurityException) {
            throw LocalStateUnreadableException("the stored '$name' cannot be decrypted", e)
        } catch (e: IllegalArgumentException) {
            throw LocalStateUnreadableException("the stored '$name' is damaged", e)
        } catch (e: RuntimeException) {
            // A Keystore that cannot give the key (ProviderException and the like).
            throw LocalStateUnreadableException("the key of the stored '$name' is unavailable", e)
        }
    }

    private companion object {
        const val TRANSFORMATION = "AES/GCM/NoPadding"
        const val ENROLLMENT = "enrollment"
        const val DEVICE_ID = "device_id"
        const val DEVICE_CREDENTIAL = "device_credential"
    }
}
