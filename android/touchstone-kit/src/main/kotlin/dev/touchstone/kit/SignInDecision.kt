package dev.touchstone.kit

/** The user's answer to a [SignInRequest]. */
sealed class SignInDecision {
    /** Approve; [choice] is the number picked (null for a backchannel request). */
    data class Approve(val choice: Int?) : SignInDecision()

    /** Decline, saying why. */
    data class Decline(val reason: SignInDeclineReason) : SignInDecision()
}
