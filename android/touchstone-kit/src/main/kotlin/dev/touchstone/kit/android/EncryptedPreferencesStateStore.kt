package dev.touchstone.kit.android

import android.content.Context
import android.security.keystore.KeyGenParameterSpec
import android.security.keystore.KeyProperties
import dev.touchstone.kit.LocalStateStore
import dev.touchstone.kit.SealedStateStore
import java.security.KeyStore
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey

/**
 * The SDK's state (registration id, user id, device credential) in `SharedPreferences`, every value sealed with
 * AES-256-GCM under a Keystore key that needs no user authentication, so reading state never prompts. A value that
 * cannot be decrypted (the key is gone after a backup restore or a Keystore reset, or the file is damaged) is
 * reported as unreadable, and [dev.touchstone.kit.BiometricLogin] treats the device as not enrolled; never a crash.
 *
 * Leave the preferences file out of backups (`android:dataExtractionRules`): a restored copy cannot be decrypted on
 * another phone anyway.
 *
 * @param name The preferences file (`touchstone` by default) and, with `.state`, the Keystore key's alias.
 */
class EncryptedPreferencesStateStore(context: Context, name: String = "touchstone") : LocalStateStore by SealedStateStore(
    SharedPreferencesKeyValueStore(context.getSharedPreferences(name, Context.MODE_PRIVATE)),
    { stateKey("$name.state") },
)

private fun stateKey(alias: String): SecretKey {
    val keyStore = KeyStore.getInstance("AndroidKeyStore").apply { load(null) }
    (keyStore.getKey(alias, null) as? SecretKey)?.let { return it }
    val generator = KeyGenerator.getInstance(KeyProperties.KEY_ALGORITHM_AES, "AndroidKeyStore")
    generator.init(
        KeyGenParameterSpec.Builder(alias, KeyProperties.PURPOSE_ENCRYPT or KeyProperties.PURPOSE_DECRYPT)
            .setBlockModes(KeyProperties.BLOCK_MODE_GCM)
            .setEncryptionPaddings(KeyProperties.ENCRYPTION_PADDING_NONE)
            .setKeySize(256)
            .setUserAuthenticationRequired(false)
            .build(),
    )
    return generator.generateKey()
}
