package dev.touchstone.kit

/** Why the user declined a sign-in request. */
enum class SignInDeclineReason(val wire: String) {
    /** "It wasn't me": someone else is trying to sign in (the app's backend hears of it; approvals may pause). */
    NOT_ME("not_me"),
    /** The user simply declined. */
    CANCEL("cancel"),
}
