package dev.touchstone.kit

import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.startCoroutine

/**
 * Runs a suspending block to its end on this thread's behalf (the standard library's coroutines only, as an app
 * without kotlinx.coroutines would). A block still running after [limitSeconds] fails the test instead of hanging it.
 */
fun <T> blocking(limitSeconds: Long = 120, block: suspend () -> T): T {
    val latch = CountDownLatch(1)
    var outcome: Result<T>? = null
    block.startCoroutine(object : Continuation<T> {
        override val context: CoroutineContext = EmptyCoroutineContext
        override fun resumeWith(result: Result<T>) {
            outcome = result
            latch.countDown()
        }
    })
    if (!latch.await(limitSeconds, TimeUnit.SECONDS)) throw AssertionError("still running after $limitSeconds s")
    return outcome!!.getOrThrow()
}

/** Runs [block] and returns the [TouchstoneException] it throws; fails the test if it throws nothing or something else. */
inline fun <reified E : TouchstoneException> expectFailure(noinline block: suspend () -> Any?): E {
    val error = try {
        blocking { block() }
        null
    } catch (e: Throwable) {
        e
    }
    if (error !is E) throw AssertionError("expected ${E::class.java.simpleName}, got ${error ?: "no exception"}", error)
    return error
}
