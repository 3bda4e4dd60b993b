package dev.touchstone.kit

// Email verification and account recovery (docs/recovery.md), as TouchstoneKit's `TouchstoneClient` has them.

/** Mails a new verification code and link to the session's address (`POST /v1/email/verification`). */
suspend fun TouchstoneClient.resendEmailVerification(token: String) {
    call("POST", "/v1/email/verification", token = token)
}

/** Verifies the session's address with the mailed 6-digit code; returns the user with `emailVerified`. */
suspend fun TouchstoneClient.confirmEmailVerification(code: String, token: String): TouchstoneUser {
    val body = call("POST", "/v1/email/verification/confirm", token = token, body = jsonOf("code" to code))
    return decoded("/v1/email/verification/confirm") { TouchstoneUser.from(body.obj("user")) }
}

/** Verifies an address with the token of the mailed link (the part after `#verify-email=`), without a session. */
suspend fun TouchstoneClient.confirmEmailVerification(linkToken: String): TouchstoneUser {
    val body = call("POST", "/v1/email/verification/confirm", body = jsonOf("token" to linkToken))
    return decoded("/v1/email/verification/confirm") { TouchstoneUser.from(body.obj("user")) }
}

/** "Forgot password?": a code and link go to the address if it has an account; the answer is the same either way. */
suspend fun TouchstoneClient.requestPasswordReset(email: String) {
    call("POST", "/v1/password-resets", body = jsonOf("email" to email))
}

/**
 * Sets a new password with the mailed code (or, with [email] null, the token of the mailed link: the part after
 * `#reset-password=`). Every session of the account ends; [PasswordReset.signedIn] is a new session unless the
 * account has passkeys or device keys.
 */
suspend fun TouchstoneClient.resetPassword(email: String?, code: String, newPassword: String): PasswordReset {
    val request = if (email != null) jsonOf("email" to email, "code" to code, "newPassword" to newPassword)
    else jsonOf("token" to code, "newPassword" to newPassword)
    val body = call("POST", "/v1/password-resets/confirm", body = request)
    return decoded("/v1/password-resets/confirm") {
        val user = TouchstoneUser.from(body.obj("user"))
        PasswordReset(user, body.int("revokedSessions"), body.objOrNull("session")?.let { TouchstoneSession(user, TouchstoneSessionInfo.from(it)) })
    }
}

/** "Email me a code": a 6-digit sign-in code goes to the address if it has an account. */
suspend fun TouchstoneClient.requestEmailCode(email: String) {
    call("POST", "/v1/email-codes", body = jsonOf("email" to email))
}

/** Signs in with a mailed code: an `email_code` session, which cannot enrol devices or passkeys. */
suspend fun TouchstoneClient.signInWithEmailCode(email: String, code: String): TouchstoneSession {
    val body = call("POST", "/v1/email-codes/verify", body = jsonOf("email" to email, "code" to code))
    return decoded("/v1/email-codes/verify") { TouchstoneSession.from(body) }
}

/** Asks to change the address: a code and link go to [newEmail], a notice to the current one (a fresh password or passkey). */
suspend fun TouchstoneClient.requestEmailChange(newEmail: String, token: String) {
    call("PUT", "/v1/session/email", token = token, body = jsonOf("email" to newEmail))
}

/** Confirms the new address with the code mailed to it; returns the user with the new, verified address. */
suspend fun TouchstoneClient.confirmEmailChange(code: String, token: String): TouchstoneUser {
    val body = call("POST", "/v1/session/email/confirm", token = token, body = jsonOf("code" to code))
    return decoded("/v1/session/email/confirm") { TouchstoneUser.from(body.obj("user")) }
}

/** Ten new recovery codes (`xxxxx-xxxxx`), shown this once (a fresh password or passkey); the previous ones stop working. */
suspend fun TouchstoneClient.generateRecoveryCodes(token: String): List<String> {
    val body = call("POST", "/v1/recovery-codes", token = token)
    return decoded("/v1/recovery-codes") { body.array("codes").strings("codes") }
}

/** Signs in with a recovery code: a `recovery_code` session that may enrol one new device or passkey. */
suspend fun TouchstoneClient.signInWithRecoveryCode(email: String, code: String): TouchstoneSession {
    val body = call("POST", "/v1/recovery-codes/verify", body = jsonOf("email" to email, "code" to code))
    return decoded("/v1/recovery-codes/verify") { TouchstoneSession.from(body) }
}
