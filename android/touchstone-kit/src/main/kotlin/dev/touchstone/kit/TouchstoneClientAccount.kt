package dev.touchstone.kit

import org.json.JSONObject

// The account as its owner's (issue #42): sessions, the data export, deletion; TouchstoneKit's
// `TouchstoneClient+Account.swift`.

/** `GET /v1/session/sessions`: where the account is signed in. */
suspend fun TouchstoneClient.sessions(token: String): List<SessionSummary> {
    val body = call("GET", "/v1/session/sessions", token = token)
    return decoded("/v1/session/sessions") { body.array("sessions").objects("sessions").map(SessionSummary::from) }
}

/** `DELETE /v1/session/sessions/{id}`: ends one of the account's sessions (the caller's own included). */
suspend fun TouchstoneClient.endSession(id: String, token: String) {
    call("DELETE", "/v1/session/sessions/${TouchstoneClient.pathComponent(id)}", token = token)
}

/** `POST /v1/session/sessions/revoke-others`: ends every other session of the account; returns how many. */
suspend fun TouchstoneClient.signOutOtherSessions(token: String): Int {
    val body = call("POST", "/v1/session/sessions/revoke-others", token = token)
    return decoded("/v1/session/sessions/revoke-others") { body.int("revokedSessions") }
}

/**
 * `GET /v1/users/me/export`: everything the server holds about the user, as the JSON document it sends (a password or
 * passkey sign-in within the last few minutes is needed).
 */
suspend fun TouchstoneClient.exportAccountData(token: String): JSONObject = call("GET", "/v1/users/me/export", token = token)

/**
 * `DELETE /v1/users/me`: deletes the account; [confirmEmail] is its address typed again (a password or passkey sign-in
 * within the last few minutes is needed). Every session ends with it.
 */
suspend fun TouchstoneClient.deleteAccount(confirmEmail: String, token: String) {
    call("DELETE", "/v1/users/me", token = token, body = jsonOf("confirmEmail" to confirmEmail))
}
