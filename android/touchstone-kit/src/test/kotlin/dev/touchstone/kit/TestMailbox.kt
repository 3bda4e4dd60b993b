package dev.touchstone.kit

import java.io.File

/**
 * The mails a test server wrote as `.eml` files (no SMTP configured): found by recipient, their quoted-printable text
 * decoded, the code or link token read out. Waits for a mail by polling, with a generous limit.
 */
class TestMailbox(private val directory: File) {
    /** The text of the newest mail to [address] whose text contains [containing], waiting for it to be written. */
    fun latest(address: String, containing: String, seen: Int = 0): String {
        val deadline = System.nanoTime() + 60_000_000_000L
        while (true) {
            // Named `<time to the millisecond>-<kind>-<id>.eml`: sorted by name, the newest is last.
            val mails = (directory.listFiles { f -> f.name.endsWith(".eml") } ?: emptyArray()).sortedBy { it.name }
                .map { decode(it.readText()) }
                .filter { text -> text.lines().any { it.startsWith("To:") && it.contains(address) } && text.contains(containing) }
            if (mails.size > seen) return mails.last()
            if (System.nanoTime() > deadline) throw AssertionError("no mail to $address containing '$containing' within 60 s")
            Thread.sleep(100)
        }
    }

    fun code(mail: String): String = Regex("""(?m)^(?:Your code: )?(\d{6})\s*$""").find(mail)?.groupValues?.get(1)
        ?: throw AssertionError("no code in the mail")

    fun token(mail: String, name: String): String = Regex("#$name=([A-Za-z0-9_-]{43})").find(mail)?.groupValues?.get(1)
        ?: throw AssertionError("no #$name link in the mail")

    /** Quoted-printable soft breaks and escapes undone (the mail's text part is quoted-printable UTF-8). */
    private fun decode(raw: String): String {
        val joined = raw.replace("=\r\n", "").replace("=\n", "")
        val bytes = java.io.ByteArrayOutputStream()
        var i = 0
        while (i < joined.length) {
            val c = joined[i]
            if (c == '=' && i + 2 < joined.length && joined.substring(i + 1, i + 3).matches(Regex("[0-9A-F]{2}"))) {
                bytes.write(joined.substring(i + 1, i + 3).toInt(16))
                i += 3
            } else {
                bytes.write(c.toString().toByteArray(Charsets.UTF_8))
                i += 1
            }
        }
        return bytes.toString(Charsets.UTF_8).replace("\r\n", "\n")
    }
}
