package dev.touchstone.kit

import java.io.ByteArrayOutputStream
import java.math.BigInteger
import java.text.SimpleDateFormat
import java.util.Date
import java.util.TimeZone

/** A small DER writer for the test certificates (X.690): exactly what the chains below need. */
object Der {
    fun tlv(identifier: ByteArray, content: ByteArray): ByteArray {
        val out = ByteArrayOutputStream()
        out.write(identifier)
        val n = content.size
        when {
            n < 0x80 -> out.write(n)
            n < 0x100 -> { out.write(0x81); out.write(n) }
            n < 0x10000 -> { out.write(0x82); out.write(n shr 8); out.write(n and 0xFF) }
            else -> { out.write(0x83); out.write(n shr 16); out.write((n shr 8) and 0xFF); out.write(n and 0xFF) }
        }
        out.write(content)
        return out.toByteArray()
    }

    fun tlv(tag: Int, content: ByteArray) = tlv(byteArrayOf(tag.toByte()), content)
    fun sequence(vararg parts: ByteArray) = tlv(0x30, concat(*parts))
    fun set(vararg parts: ByteArray) = tlv(0x31, concat(*parts))
    fun integer(value: Long) = integer(BigInteger.valueOf(value))
    fun integer(value: BigInteger) = tlv(0x02, value.toByteArray())
    fun enumerated(value: Long) = tlv(0x0A, BigInteger.valueOf(value).toByteArray())
    fun octets(bytes: ByteArray) = tlv(0x04, bytes)
    fun utf8(text: String) = tlv(0x0C, text.toByteArray(Charsets.UTF_8))
    fun nul() = byteArrayOf(0x05, 0x00)
    fun boolean(value: Boolean) = byteArrayOf(0x01, 0x01, if (value) 0xFF.toByte() else 0)
    fun bitString(bytes: ByteArray, unusedBits: Int = 0) = tlv(0x03, byteArrayOf(unusedBits.toByte()) + bytes)

    fun utcTime(date: Date): ByteArray {
        val format = SimpleDateFormat("yyMMddHHmmss'Z'").apply { timeZone = TimeZone.getTimeZone("UTC") }
        return tlv(0x17, format.format(date).toByteArray(Charsets.US_ASCII))
    }

    fun oid(dotted: String): ByteArray {
        val arcs = dotted.split('.').map { it.toLong() }
        val out = ByteArrayOutputStream()
        out.write((arcs[0] * 40 + arcs[1]).toInt())
        for (arc in arcs.drop(2)) out.write(base128(arc))
        return tlv(0x06, out.toByteArray())
    }

    /** `[number] EXPLICIT`, context-specific and constructed, with the high-tag-number form above 30. */
    fun explicit(number: Int, content: ByteArray): ByteArray {
        val identifier = if (number < 31) byteArrayOf((0xA0 or number).toByte()) else byteArrayOf(0xBF.toByte()) + base128(number.toLong())
        return tlv(identifier, content)
    }

    private fun base128(value: Long): ByteArray {
        val groups = ArrayList<Int>()
        var rest = value
        do {
            groups.add((rest and 0x7F).toInt())
            rest = rest shr 7
        } while (rest > 0)
        groups.reverse()
        return ByteArray(groups.size) { i -> (if (i < groups.size - 1) groups[i] or 0x80 else groups[i]).toByte() }
    }

    fun concat(vararg parts: ByteArray): ByteArray {
        val out = ByteArrayOutputStream()
        for (part in parts) out.write(part)
        return out.toByteArray()
    }
}
