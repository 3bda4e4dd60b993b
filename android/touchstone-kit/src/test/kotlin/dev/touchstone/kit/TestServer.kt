package dev.touchstone.kit

import dev.touchstone.kit.software.ScriptedVerifier
import dev.touchstone.kit.software.SoftwareKeyStore
import dev.touchstone.kit.software.softwareStateStore
import java.io.File
import java.nio.file.Files
import java.util.Date
import java.util.UUID
import java.util.concurrent.TimeUnit

/**
 * A real `touchstone serve` (the binary named by the `touchstone.binary` property) on a loopback port, SQLite in a
 * temporary folder, trusting this run's [TestAndroidKeystore] root for Android key attestation (which it requires)
 * and accepting the test app's passkey origin. Every server started is stopped by [stopAll], which the test runner
 * calls on every path, and by a shutdown hook.
 */
class TestServer private constructor(environment: Map<String, String>) {
    val keystore = TestAndroidKeystore(Date(System.currentTimeMillis() - 3_600_000), Date(System.currentTimeMillis() + 86_400_000))
    val directory: File = Files.createTempDirectory("touchstone-android-").toFile()
    private val process: Process
    private val output = StringBuffer()
    val port: Int
    val baseUrl: String get() = "http://127.0.0.1:$port"

    init {
        val roots = File(directory, "android-roots.pem").apply { writeText(keystore.rootPem) }
        // A port known before the start, so that the issuer (which a sign-in QR code names) is this origin.
        val chosen = java.net.ServerSocket(0).use { it.localPort }
        val builder = ProcessBuilder(binary, "serve", "--host", "127.0.0.1", "--port", "$chosen", "--database", "sqlite:${File(directory, "touchstone.sqlite")}")
            .redirectErrorStream(true)
        val env = builder.environment()
        env["TOUCHSTONE_ISSUER"] = "http://127.0.0.1:$chosen"
        env["TOUCHSTONE_BCRYPT_COST"] = "4"
        env["TOUCHSTONE_RATE_LIMITS"] = "off"
        env["TOUCHSTONE_LOG_LEVEL"] = "debug"
        env["TOUCHSTONE_ANDROID_APPS"] = TestAndroidKeystore.appEntry
        env["TOUCHSTONE_ANDROID_ATTESTATION_ROOTS"] = roots.path
        env["TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION"] = "true"
        env["TOUCHSTONE_MAIL_DIR"] = File(directory, "mail").path
        env.putAll(environment)
        process = builder.start()
        all.add(this)
        val reader = Thread {
            try {
                process.inputStream.bufferedReader().forEachLine { line -> output.append(line).append('\n') }
            } catch (e: java.io.IOException) {
                // The process was stopped.
            }
        }.apply { isDaemon = true; start() }
        var found: Int? = null
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        while (found == null && System.nanoTime() < deadline && (process.isAlive || reader.isAlive)) {
            found = Regex("listening on 127\\.0\\.0\\.1:(\\d+)").find(output)?.groupValues?.get(1)?.toInt()
            if (found == null) Thread.sleep(50)
        }
        if (found == null) {
            stop()
            throw IllegalStateException("touchstone serve did not start:\n$output")
        }
        port = found
    }

    /** Everything the server printed so far. */
    val log: String get() = output.toString()

    fun stop() {
        if (process.isAlive) {
            process.destroy()
            if (!process.waitFor(15, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(15, TimeUnit.SECONDS)
        }
        directory.deleteRecursively()
    }

    /** A client of this server, logging into [logger] when given. */
    fun client(logger: TouchstoneLogger? = null) = TouchstoneClient(HttpUrlConnectionTransport(baseUrl), logger)

    /** A simulated phone: software keys that attest through this server's test Keystore, a scripted prompt, sealed state. */
    fun phone(client: TouchstoneClient = client(), keyStore: SoftwareKeyStore = attestingKeyStore(), verifier: ScriptedVerifier = ScriptedVerifier(),
              stateStore: LocalStateStore = softwareStateStore()) = Phone(BiometricLogin(client, keyStore, verifier, stateStore), keyStore, verifier, stateStore)

    /** A software key store whose keys come with a chain this server accepts. */
    fun attestingKeyStore(key: TestAndroidKeystore.Key = TestAndroidKeystore.Key()) =
        SoftwareKeyStore { publicKey, challenge -> keystore.chain(publicKey, challenge, key) }

    /** A phone's parts, for tests that reach into them. */
    class Phone(val biometrics: BiometricLogin, val keyStore: SoftwareKeyStore, val verifier: ScriptedVerifier, val state: LocalStateStore) {
        val client: TouchstoneClient get() = biometrics.client
    }

    /** A new account with a password session. */
    fun newAccount(client: TouchstoneClient = client()): TouchstoneSession =
        blocking { client.createUser("android-${UUID.randomUUID().toString().take(8)}@example.com", PASSWORD) }

    companion object {
        const val PASSWORD = "correct horse battery"
        private val all = java.util.Collections.synchronizedList(ArrayList<TestServer>())

        val binary: String get() = System.getProperty("touchstone.binary") ?: error("set -Dtouchstone.binary (scripts/android.sh does)")

        /** The repository's root, for files the Swift tests share (vectors, docs, the Swift SDK's tables). */
        val repo: File get() = File(System.getProperty("touchstone.repo") ?: error("set -Dtouchstone.repo"))

        /** The server most tests share. */
        val shared: TestServer by lazy { TestServer(emptyMap()) }

        /** A server of its own, with more settings. */
        fun start(environment: Map<String, String>) = TestServer(environment)

        fun stopAll() {
            synchronized(all) { all.toList() }.forEach { runCatching { it.stop() } }
        }

        init {
            Runtime.getRuntime().addShutdownHook(Thread { stopAll() })
        }
    }
}
