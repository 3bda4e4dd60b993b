package dev.touchstone.kit

/**
 * Creates an account from this device with a device key: no password, no passkey (issue #42). TouchstoneKit's
 * `BiometricLogin.signUp(email:displayName:deviceName:reason:)`.
 *
 * Makes a Keystore key (attested with a sign-up challenge when the server checks key attestation), sends it with the
 * address, signs the server's challenge after the prompt, and keeps the enrolment and the device credential as
 * [BiometricLogin.enable] does. The address is unverified until the mailed code is entered. If anything fails, the new
 * key is deleted.
 *
 * @return The new account's first session (`methods: ["biometric"]`, strong: it may add a passkey at once).
 * @throws TouchstoneException `ENABLED_FOR_ANOTHER_ACCOUNT` (this device is enabled already, or the server has it
 * enrolled for another account), the device codes, prompt outcomes, `SERVER` (`email_taken`, `sign_up_disabled`...).
 */
suspend fun BiometricLogin.signUp(
    email: String,
    displayName: String? = null,
    deviceName: String? = null,
    reason: String = "Create your account",
): TouchstoneSession = gate.withLock {
    val previous = loadEnrollmentOrNull()
    if (previous != null) {
        throw TouchstoneException.of(TouchstoneErrorCode.ENABLED_FOR_ANOTHER_ACCOUNT,
            "biometric sign-in on this device belongs to ${previous.email ?: "another account"}; disable it first")
    }
    requireDeviceAndServerAllowEnrolment()
    val deviceId = stateStore.deviceId()
    val challenge = if (keyAttestation) attestationChallenge(null) else null
    val tag = makeKeyTag()
    val created = keyStoreCall { keyStore.createKey(tag, policy, challenge) }
    var proofKey: NewProofKey? = null
    val signedUp = try {
        val grant = client.startSignUp(email, displayName, created.publicKey, BiometricLogin.ALGORITHM, deviceId, deviceName,
            created.attestationChain.takeIf { challenge != null })
        proofKey = makeProofKey(tag, grant.challenge, attest = challenge != null && created.attestationChain != null)
        val signature = signWithPrompt(tag, policy, reason, DPoPProofSigner.enrolmentMessage(grant.challenge, proofKey?.signer?.publicKey))
        client.finishSignUp(grant.signUpId, signature, proofKeyEnrolment(proofKey, grant.challenge))
    } catch (e: TouchstoneException) {
        runCatching { keyStore.deleteKey(tag) }
        proofKey?.let { runCatching { proofKeyStore?.deleteProofKey(it.signer.tag) } }
        if (e.serverCode == "device_enrolled_for_another_user") {
            throw TouchstoneException.Enrollment(TouchstoneErrorCode.ENABLED_FOR_ANOTHER_ACCOUNT, e.message, e.serverCode, e.httpStatus)
        }
        throw e
    }
    val enrollment = LocalEnrollment(signedUp.session.user.id, signedUp.registration.id, tag, policy, signedUp.session.user.email,
        proofKeyTag = proofKey?.signer?.tag)
    stateStore.saveEnrollment(enrollment)
    stateStore.saveDeviceCredential(signedUp.deviceCredential, signedUp.registration.id)
    bound(signedUp.session, enrollment)
}
