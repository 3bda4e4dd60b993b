package dev.touchstone.kit.software

import dev.touchstone.kit.BiometryAvailability
import dev.touchstone.kit.KeyAccessPolicy
import dev.touchstone.kit.TouchstoneException
import dev.touchstone.kit.UserVerifier
import java.security.Signature
import java.util.concurrent.ConcurrentLinkedQueue

/**
 * A [UserVerifier] that answers from a script: each prompt takes the next queued outcome (an exception to throw, or
 * null to approve), and approves when the queue is empty. It records every prompt's text.
 */
class ScriptedVerifier(var availability: BiometryAvailability = BiometryAvailability.Available) : UserVerifier {
    private val outcomes = ConcurrentLinkedQueue<Result<Unit>>()

    /** The prompts shown, in order. */
    val prompts: MutableList<String> = java.util.Collections.synchronizedList(ArrayList())

    /** The policies the prompts were shown for, in order. */
    val policies: MutableList<KeyAccessPolicy> = java.util.Collections.synchronizedList(ArrayList())

    /** The next prompt ends with [error] (a cancel, a fallback, a lockout). */
    fun fail(error: TouchstoneException) {
        outcomes.add(Result.failure(error))
    }

    override suspend fun availability(policy: KeyAccessPolicy): BiometryAvailability = availability

    override suspend fun verifyUser(reason: String, signature: Signature, policy: KeyAccessPolicy): Signature {
        prompts.add(reason)
        policies.add(policy)
        outcomes.poll()?.getOrThrow()
        return signature
    }
}
