package dev.touchstone.kit

import org.json.JSONArray
import org.json.JSONException
import org.json.JSONObject
import org.json.JSONTokener

/**
 * Strict reading of the server's JSON: `org.json`'s getters coerce (a number read as a string, "true" as a boolean),
 * which would let a wrong answer through. These read exactly the promised type, or throw [MalformedAnswer], which the
 * client turns into [TouchstoneException.Transport] with [TransportFailure.UNREADABLE].
 */
internal class MalformedAnswer(message: String) : Exception(message)

internal object Json {
    /** Parses [bytes] as one JSON object (nothing after it). */
    fun parseObject(bytes: ByteArray): JSONObject {
        val text = bytes.toString(Charsets.UTF_8)
        try {
            val tokener = JSONTokener(text)
            val value = tokener.nextValue()
            if (value !is JSONObject) throw MalformedAnswer("the answer is not a JSON object")
            // nextClean() gives a char (a String in the API stubs): compared as text, it compiles against both.
            if (tokener.more() && tokener.nextClean().toString() != "\u0000") throw MalformedAnswer("text after the JSON object")
            return value
        } catch (e: JSONException) {
            throw MalformedAnswer("the answer is not JSON")
        } catch (e: RuntimeException) {
            // org.json's tokenizer may throw other runtime errors on hostile text (deep nesting, bad escapes).
            throw MalformedAnswer("the answer is not JSON")
        } catch (e: StackOverflowError) {
            throw MalformedAnswer("the answer is nested too deeply")
        }
    }
}

internal fun JSONObject.value(name: String): Any? = if (isNull(name)) null else opt(name)

internal fun JSONObject.string(name: String): String =
    value(name) as? String ?: throw MalformedAnswer("field '$name' is missing or not a string")

internal fun JSONObject.stringOrNull(name: String): String? = when (val v = value(name)) {
    null -> null
    is String -> v
    else -> throw MalformedAnswer("field '$name' is not a string")
}

internal fun JSONObject.long(name: String): Long = when (val v = value(name)) {
    is Int -> v.toLong()
    is Long -> v
    is Double -> if (v == Math.floor(v) && Math.abs(v) < 9.007199254740992E15) v.toLong()
    else throw MalformedAnswer("field '$name' is not an integer")
    else -> throw MalformedAnswer("field '$name' is missing or not an integer")
}

internal fun JSONObject.int(name: String): Int {
    val v = long(name)
    if (v < Int.MIN_VALUE || v > Int.MAX_VALUE) throw MalformedAnswer("field '$name' is out of range")
    return v.toInt()
}

internal fun JSONObject.bool(name: String): Boolean =
    value(name) as? Boolean ?: throw MalformedAnswer("field '$name' is missing or not a boolean")

internal fun JSONObject.boolOrNull(name: String): Boolean? = when (val v = value(name)) {
    null -> null
    is Boolean -> v
    else -> throw MalformedAnswer("field '$name' is not a boolean")
}

internal fun JSONObject.obj(name: String): JSONObject =
    value(name) as? JSONObject ?: throw MalformedAnswer("field '$name' is missing or not an object")

internal fun JSONObject.objOrNull(name: String): JSONObject? = when (val v = value(name)) {
    null -> null
    is JSONObject -> v
    else -> throw MalformedAnswer("field '$name' is not an object")
}

internal fun JSONObject.array(name: String): JSONArray =
    value(name) as? JSONArray ?: throw MalformedAnswer("field '$name' is missing or not an array")

internal fun <T> JSONArray.mapItems(name: String, read: (Any) -> T): List<T> = (0 until length()).map { index ->
    val item = opt(index)
    if (item == null || item == JSONObject.NULL) throw MalformedAnswer("an item of '$name' is null")
    read(item)
}

internal fun JSONArray.objects(name: String): List<JSONObject> =
    mapItems(name) { it as? JSONObject ?: throw MalformedAnswer("an item of '$name' is not an object") }

internal fun JSONArray.strings(name: String): List<String> =
    mapItems(name) { it as? String ?: throw MalformedAnswer("an item of '$name' is not a string") }

/** Builds a JSON object from pairs, leaving out null values. */
internal fun jsonOf(vararg pairs: Pair<String, Any?>): JSONObject {
    val json = JSONObject()
    for ((key, value) in pairs) if (value != null) json.put(key, value)
    return json
}
