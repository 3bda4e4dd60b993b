package dev.touchstone.kit.software

import dev.touchstone.kit.KeyValueStore
import dev.touchstone.kit.SealedStateStore
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey

/** A [SealedStateStore] over [backing] (a map by default) with a software AES-256 key: the JVM's secure preferences. */
fun softwareStateStore(
    backing: KeyValueStore = InMemoryKeyValueStore(),
    key: SecretKey = KeyGenerator.getInstance("AES").apply { init(256) }.generateKey(),
): SealedStateStore = SealedStateStore(backing) { key }
