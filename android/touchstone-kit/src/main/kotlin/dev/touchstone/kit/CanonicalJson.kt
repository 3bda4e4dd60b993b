package dev.touchstone.kit

import java.math.BigDecimal
import java.math.MathContext
import java.math.RoundingMode
import org.json.JSONArray
import org.json.JSONObject

/**
 * RFC 8785 (JSON Canonicalization Scheme): members sorted by their keys' UTF-16 code units, no white space, strings
 * escaped as ECMAScript's `JSON.stringify` escapes them, numbers written as ECMAScript's `Number.prototype.toString`
 * writes them. The server makes confirmation payloads and checks sign-in decisions with its own serialiser
 * (`Sources/TouchstoneConfirmation/CanonicalJSON.swift`); a test holds both to the same vectors.
 *
 * Takes `null`/[JSONObject.NULL], [Boolean], [String], integers, [Double], [Map] with string keys, [List],
 * [JSONObject] and [JSONArray].
 */
internal object CanonicalJson {
    fun serialize(value: Any?): ByteArray = StringBuilder().also { write(value, it) }.toString().toByteArray(Charsets.UTF_8)

    fun string(value: Any?): String = StringBuilder().also { write(value, it) }.toString()

    private fun write(value: Any?, out: StringBuilder) {
        when (value) {
            null, JSONObject.NULL -> out.append("null")
            is Boolean -> out.append(if (value) "true" else "false")
            is String -> writeString(value, out)
            is Int, is Long, is Short, is Byte -> out.append((value as Number).toLong().toString())
            is Double -> out.append(number(value))
            is Float -> out.append(number(value.toDouble()))
            is Map<*, *> -> writeObject(value.entries.map { (k, v) -> (k as String) to v }, out)
            is JSONObject -> writeObject(value.keys().asSequence().map { it to value.opt(it) }.toList(), out)
            is List<*> -> writeArray(value, out)
            is JSONArray -> writeArray((0 until value.length()).map { value.opt(it) }, out)
            else -> throw IllegalArgumentException("no JSON form for ${value::class.java.name}")
        }
    }

    private fun writeObject(members: List<Pair<String, Any?>>, out: StringBuilder) {
        out.append('{')
        // String.compareTo compares UTF-16 code units, which is RFC 8785's order.
        members.sortedWith { a, b -> a.first.compareTo(b.first) }.forEachIndexed { index, (key, value) ->
            if (index > 0) out.append(',')
            writeString(key, out)
            out.append(':')
            write(value, out)
        }
        out.append('}')
    }

    private fun writeArray(items: List<Any?>, out: StringBuilder) {
        out.append('[')
        items.forEachIndexed { index, item ->
            if (index > 0) out.append(',')
            write(item, out)
        }
        out.append(']')
    }

    private const val HEX = "0123456789abcdef"

    fun writeString(text: String, out: StringBuilder) {
        out.append('"')
        for (c in text) {
            when (c) {
                '"' -> out.append("\\\"")
                '\\' -> out.append("\\\\")
                '\b' -> out.append("\\b")
                '\u000C' -> out.append("\\f")
                '\n' -> out.append("\\n")
                '\r' -> out.append("\\r")
                '\t' -> out.append("\\t")
                else -> if (c < ' ') {
                    out.append("\\u00").append(HEX[c.code shr 4]).append(HEX[c.code and 0xF])
                } else {
                    out.append(c)
                }
            }
        }
        out.append('"')
    }

    /** A double as ECMAScript's `Number.prototype.toString` writes it (ECMA-262 §6.1.6.1.20). */
    fun number(value: Double): String {
        require(!value.isNaN() && !value.isInfinite()) { "NaN and infinities have no JSON form" }
        if (value == 0.0) return "0"
        if (value < 0) return "-" + number(-value)
        // The shortest decimal that reads back as the same double (the closest one at that length).
        val exact = BigDecimal(value)
        var digits: BigDecimal = exact
        for (precision in 1..17) {
            val rounded = exact.round(MathContext(precision, RoundingMode.HALF_EVEN))
            if (rounded.toDouble() == value) {
                digits = rounded
                break
            }
        }
        digits = digits.stripTrailingZeros()
        val s = digits.unscaledValue().toString()
        val k = s.length
        val n = k - digits.scale() // value = s × 10^(n−k)
        return when {
            n in k..21 -> s + "0".repeat(n - k)
            n in 1..21 -> s.substring(0, n) + "." + s.substring(n)
            n > -6 && n <= 0 -> "0." + "0".repeat(-n) + s
            else -> {
                val e = n - 1
                val exponent = if (e >= 0) "e+$e" else "e$e"
                if (k == 1) s + exponent else s.substring(0, 1) + "." + s.substring(1) + exponent
            }
        }
    }
}
