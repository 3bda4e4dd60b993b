package dev.touchstone.kit.android

import android.content.SharedPreferences
import dev.touchstone.kit.KeyValueStore

/** [KeyValueStore] over `SharedPreferences`, written with `commit()` so a value is on disk before the SDK goes on. */
class SharedPreferencesKeyValueStore(private val preferences: SharedPreferences) : KeyValueStore {
    override fun get(name: String): String? = try {
        preferences.getString(name, null)
    } catch (e: ClassCastException) {
        null
    }

    override fun put(name: String, value: String) {
        preferences.edit().putString(name, value).commit()
    }

    override fun remove(name: String) {
        preferences.edit().remove(name).commit()
    }

    override fun clear() {
        preferences.edit().clear().commit()
    }
}
