package dev.touchstone.kit

import java.lang.management.ManagementFactory
import kotlin.system.exitProcess

/**
 * The Android SDK's own cost per biometric sign-in ceremony on the JVM (`scripts/android.sh --bench`): one phone signs
 * in against a real server, one ceremony after another, and the JVM's CPU time is divided by the ceremonies; the
 * ES256 signature alone is measured the same way, so what the SDK adds (two HTTP exchanges over HttpURLConnection,
 * JSON, state reads, the prompt port) is the difference. The server runs in its own process and is not counted.
 *
 * Arguments: `[ceremonies]` (default 2000), after a warm-up of a quarter as many.
 */
fun main(args: Array<String>) {
    val ceremonies = args.firstOrNull()?.toIntOrNull() ?: 2000
    val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean
    val server = TestServer.shared
    try {
        val phone = server.phone()
        blocking { phone.biometrics.enable(server.newAccount(phone.client)) }
        repeat(ceremonies / 4) { blocking { phone.biometrics.signIn("Sign in") } }

        val cpu0 = os.processCpuTime
        val wall0 = System.nanoTime()
        repeat(ceremonies) { blocking { phone.biometrics.signIn("Sign in") } }
        val ceremonyCpu = (os.processCpuTime - cpu0) / 1000.0 / ceremonies
        val ceremonyWall = (System.nanoTime() - wall0) / 1000.0 / ceremonies

        val tag = phone.keyStore.tags.single()
        val message = ByteArray(43) { 'a'.code.toByte() }
        fun sign() = blocking { phone.keyStore.signer(tag) }.apply { update(message) }.sign()
        repeat(ceremonies / 4) { sign() }
        val cpu1 = os.processCpuTime
        repeat(ceremonies) { sign() }
        val signatureCpu = (os.processCpuTime - cpu1) / 1000.0 / ceremonies

        println("android SDK bench: $ceremonies sequential biometric sign-ins against touchstone serve (SQLite), JVM ${System.getProperty("java.version")}")
        println("  wall per ceremony:            %8.0f µs".format(ceremonyWall))
        println("  client CPU per ceremony:      %8.0f µs".format(ceremonyCpu))
        println("  of which the ES256 signature: %8.0f µs".format(signatureCpu))
        println("  the SDK's own (the rest):     %8.0f µs".format(ceremonyCpu - signatureCpu))
    } finally {
        TestServer.stopAll()
    }
    exitProcess(0)
}
