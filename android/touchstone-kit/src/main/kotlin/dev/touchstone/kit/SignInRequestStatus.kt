package dev.touchstone.kit

/**
 * The browser's view of its request (`GET /v1/sign-in-requests/{id}`).
 *
 * @property status `pending`, `approved`, `declined` or `expired`.
 * @property session The session the approval made, on the first answer that sees the approval only.
 */
data class SignInRequestStatus(val status: String, val session: TouchstoneSession?)
