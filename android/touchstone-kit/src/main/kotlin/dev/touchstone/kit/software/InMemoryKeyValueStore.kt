package dev.touchstone.kit.software

import dev.touchstone.kit.KeyValueStore
import java.util.concurrent.ConcurrentHashMap

/** A [KeyValueStore] in a map: under a [dev.touchstone.kit.SealedStateStore] on the JVM and in tests. */
class InMemoryKeyValueStore : KeyValueStore {
    /** The raw (sealed) values, for tests that damage them. */
    val values = ConcurrentHashMap<String, String>()

    override fun get(name: String): String? = values[name]
    override fun put(name: String, value: String) {
        values[name] = value
    }
    override fun remove(name: String) {
        values.remove(name)
    }
    override fun clear() = values.clear()
}
