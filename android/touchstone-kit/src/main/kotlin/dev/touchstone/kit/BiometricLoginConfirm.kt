package dev.touchstone.kit

/**
 * Approves a transaction confirmation with this device's key: what you see is what you sign.
 *
 * The SDK reads the payload itself, refuses it unless its id and summary are exactly those of [confirmation] and it is
 * for the enrolled user, shows **the payload's** summary in the prompt, signs the payload's UTF-8 bytes and sends the
 * signature. The receipt is for the app's backend, which verifies it with the JWKS.
 *
 * ```kotlin
 * val request = client.confirmationRequest(id, session.session.token).second
 * val approved = biometrics.confirm(request, promptPrefix = "Approve: ")
 * myBackend.submit(approved.receipt)
 * ```
 *
 * @throws TouchstoneException `CONFIRMATION_MISMATCH` (nothing was signed), `CONFIRMATION_EXPIRED`,
 * `CONFIRMATION_NOT_PENDING`, `NOT_ENABLED`, prompt outcomes, `REGISTRATION_LOCKED`, `REGISTRATION_REVOKED`, `SERVER`.
 */
suspend fun BiometricLogin.confirm(confirmation: ConfirmationRequest, promptPrefix: String = ""): ApprovedConfirmation = gate.withLock {
    val enrollment = requireEnrollmentWithKey()
    val fields = try {
        Json.parseObject(confirmation.payload.toByteArray(Charsets.UTF_8))
    } catch (e: MalformedAnswer) {
        throw mismatch("the payload is not a confirmation payload")
    }
    // Compared as exact text: "é" and "e\u0301" look alike but are not the same text on the screen or in the signature.
    val version = fields.opt("version")
    if (version != 1 || fields.opt("confirmationId") != confirmation.id) throw mismatch("the payload is for another confirmation")
    val summary = fields.opt("summary") as? String
    if (summary != confirmation.summary) throw mismatch("the payload's summary is not the one shown")
    if (fields.opt("userId") != enrollment.userId) throw mismatch("the confirmation is for another user than this device's")
    try {
        val signature = signWithPrompt(enrollment.keyTag, enrollment.policy, promptPrefix + summary,
            confirmation.payload.toByteArray(Charsets.UTF_8), enrollment)
        client.approveConfirmation(confirmation.id, enrollment.registrationId, signature)
    } catch (e: TouchstoneException) {
        throw handleSignInError(e, enrollment)
    }
}

private fun mismatch(message: String) = TouchstoneException.Confirmation(TouchstoneErrorCode.CONFIRMATION_MISMATCH, message)
