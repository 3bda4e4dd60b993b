package dev.touchstone.kit

import kotlin.coroutines.Continuation
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine

/**
 * A suspending mutual-exclusion gate with the standard library only (no kotlinx.coroutines): callers run one at a
 * time, in arrival order, without blocking a thread while they wait.
 */
internal class SerialGate {
    private val lock = Any()
    private var held = false
    private val waiters = ArrayDeque<Continuation<Unit>>()

    suspend fun <T> withLock(block: suspend () -> T): T {
        acquire()
        try {
            return block()
        } finally {
            release()
        }
    }

    private suspend fun acquire() {
        synchronized(lock) {
            if (!held) {
                held = true
                return
            }
        }
        suspendCoroutine { continuation ->
            val now = synchronized(lock) {
                if (!held) {
                    held = true
                    true
                } else {
                    waiters.addLast(continuation)
                    false
                }
            }
            if (now) continuation.resume(Unit)
        }
    }

    private fun release() {
        val next = synchronized(lock) {
            val waiter = waiters.removeFirstOrNull()
            if (waiter == null) held = false
            waiter
        }
        next?.resume(Unit) // the gate passes to the next caller still held
    }
}
