package dev.touchstone.kit

import java.util.concurrent.Executor
import java.util.concurrent.Executors
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.coroutines.suspendCoroutine

/** Daemon threads for blocking platform work (Keystore key generation, which takes seconds on StrongBox). */
internal val backgroundExecutor: Executor = Executors.newCachedThreadPool { runnable ->
    Thread(runnable, "touchstone-background").apply { isDaemon = true }
}

/** Runs blocking [work] off the caller's thread and suspends until it ends (the standard library's coroutines only). */
internal suspend fun <T> onBackground(executor: Executor = backgroundExecutor, work: () -> T): T = suspendCoroutine { continuation ->
    executor.execute {
        val result = runCatching(work)
        result.fold({ continuation.resume(it) }, { continuation.resumeWithException(it) })
    }
}
