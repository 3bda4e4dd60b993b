package dev.touchstone.kit

/** Plain string storage under names: `SharedPreferences` on Android, a map on the JVM. [SealedStateStore] encrypts on top. */
interface KeyValueStore {
    /** The value under [name], or null. */
    fun get(name: String): String?

    /** Stores [value] under [name], durably before it returns. */
    fun put(name: String, value: String)

    /** Removes the value under [name], if any. */
    fun remove(name: String)

    /** Removes every value. */
    fun clear()
}
