package dev.touchstone.kit

/**
 * Proves this device's key again in [session] after the biometric prompt, so privileged acts (adding a device or a
 * passkey, a PIN, the address, the password, recovery codes, the export, deletion) are allowed for the server's window:
 * a PIN session, or any session past the window, becomes fresh. Returns the session as it now is (the same token,
 * `methods: ["biometric"]`). TouchstoneKit's `BiometricLogin.reauthenticate(session:reason:)`.
 *
 * @throws TouchstoneException `NOT_ENABLED`, prompt outcomes, `REGISTRATION_LOCKED`, `REGISTRATION_REVOKED` (local state
 * deleted), `SERVER` (`invalid_signature`, `challenge_expired`...), `TRANSPORT`.
 */
suspend fun BiometricLogin.reauthenticate(session: TouchstoneSession, reason: String): TouchstoneSession = gate.withLock {
    val enrollment = requireEnrollmentWithKey()
    val token = session.session.token
    try {
        val grant = client.reauthenticationChallenge(enrollment.registrationId, token)
        val signature = signWithPrompt(enrollment.keyTag, enrollment.policy, reason, grant.challenge.toByteArray(Charsets.UTF_8), enrollment)
        TouchstoneSession(session.user, client.reauthenticate(enrollment.registrationId, grant.challenge, signature, token))
    } catch (e: TouchstoneException) {
        throw handleSignInError(e, enrollment)
    }
}
