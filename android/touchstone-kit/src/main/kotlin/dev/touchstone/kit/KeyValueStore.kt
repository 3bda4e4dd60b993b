package dev.touchstone.kit

/** Plain string storage under names: `SharedPreferences` on Android, a map on the JVM. [SealedStateStore] encrypts on top. */
interface KeyValueStore {
    fun get(name: String): String?
    fun put(name: String, value: String)
    fun remove(name: String)
    fun clear()
}
