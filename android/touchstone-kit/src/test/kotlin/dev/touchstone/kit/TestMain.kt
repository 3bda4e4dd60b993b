package dev.touchstone.kit

import org.junit.runner.Description
import org.junit.runner.JUnitCore
import org.junit.runner.notification.Failure
import org.junit.runner.notification.RunListener
import kotlin.system.exitProcess

/** Every JUnit test class of the SDK, run in this order. */
val testClasses: List<Class<*>> = listOf(
    CanonicalJsonTests::class.java,
    ErrorCodeTableTests::class.java,
    PlatformErrorMappingTests::class.java,
    HostileAnswerTests::class.java,
    StateStoreTests::class.java,
    ScannedSignInTests::class.java,
    EnableAndSignInTests::class.java,
    DPoPTests::class.java,
    KeyLifecycleTests::class.java,
    PinTests::class.java,
    ConfirmationTests::class.java,
    SignInRequestTests::class.java,
    PasskeyTests::class.java,
    RecoveryTests::class.java,
    AccountTests::class.java,
    SignUpTests::class.java,
    ServerErrorCodeTests::class.java,
    SecretsInLogsTests::class.java,
)

/**
 * Runs the tests with JUnit 4 and prints what CI reads: one line per failure, then `N passed, N failed`. The servers
 * the tests started are stopped on every path (a failed test included) before the JVM exits.
 */
fun main() {
    val core = JUnitCore()
    var failures = 0
    core.addListener(object : RunListener() {
        override fun testFailure(failure: Failure) {
            failures += 1
            println("FAILED ${failure.description.displayName}: ${failure.message}")
            println(failure.trace.lineSequence().take(12).joinToString("\n"))
        }

        override fun testFinished(description: Description) {
            println("  ${description.methodName}")
        }
    })
    val result = try {
        core.run(*testClasses.toTypedArray())
    } finally {
        TestServer.stopAll()
    }
    val passed = result.runCount - result.failureCount - result.ignoreCount
    println()
    println("android: $passed passed, ${result.failureCount} failed" + if (result.ignoreCount > 0) ", ${result.ignoreCount} skipped" else "")
    exitProcess(if (result.failureCount == 0 && failures == 0) 0 else 1)
}
