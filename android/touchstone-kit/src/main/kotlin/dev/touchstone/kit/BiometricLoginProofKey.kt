package dev.touchstone.kit

// The phone's proof key (DPoP, issue #43). When the key store can keep one ([ProofKeyStore]: the Keystore and software
// stores), enrolment makes a second key with no user authentication, registers it with the device key's signature,
// and every session of this device's sign-ins is then bound to it: the client adds a proof to each of its requests,
// and the session token is worthless anywhere else. TouchstoneKit's `BiometricLogin+ProofKey.swift`.

internal val BiometricLogin.proofKeyStore: ProofKeyStore? get() = keyStore as? ProofKeyStore

/** The proof key's alias for an enrolment whose device key is [tag]. */
internal fun proofKeyTag(tag: String) = "$tag.proof"

/** A proof key just made: its signer and, when attested, its chain. */
internal class NewProofKey(val signer: DPoPProofSigner, val attestationChain: List<ByteArray>?)

/**
 * Makes the proof key of an enrolment whose device key is [tag], attested with the UTF-8 bytes of the enrolment's
 * [challenge] when the device key was attested ([attest]); null when the key store keeps none.
 */
internal suspend fun BiometricLogin.makeProofKey(tag: String, challenge: String, attest: Boolean): NewProofKey? {
    val store = proofKeyStore ?: return null
    val proofTag = proofKeyTag(tag)
    val created = keyStoreCall { store.createProofKey(proofTag, if (attest) challenge.toByteArray(Charsets.UTF_8) else null) }
    return NewProofKey(DPoPProofSigner(store, proofTag, created.publicKey), created.attestationChain?.takeIf { attest })
}

/** The proof key's part of the enrolment: its public key, its signature over `<challenge>.<thumbprint>`, its chain. */
internal suspend fun proofKeyEnrolment(key: NewProofKey?, challenge: String): ProofKeyEnrolment? = key?.let {
    ProofKeyEnrolment(it.signer.publicKey, it.signer.signRaw(DPoPProofSigner.enrolmentMessage(challenge, it.signer.publicKey)), it.attestationChain)
}

/** [session], from a sign-in of [enrollment], bound to its proof key in the client (when it has one). */
internal suspend fun BiometricLogin.bound(session: TouchstoneSession, enrollment: LocalEnrollment): TouchstoneSession {
    val tag = enrollment.proofKeyTag ?: return session
    val store = proofKeyStore ?: return session
    val publicKey = keyStoreCall { store.proofKeyPublicKey(tag) } ?: return session
    client.bind(session.session.token, DPoPProofSigner(store, tag, publicKey))
    return session
}

/**
 * Binds a session the app kept (from an earlier launch) again: a session of this device's biometric or PIN sign-in
 * whose enrolment has a proof key gets its proofs back. Other sessions are left as they are.
 */
suspend fun BiometricLogin.resume(session: TouchstoneSession) = gate.withLock {
    val enrollment = loadEnrollmentOrNull() ?: return@withLock
    if (enrollment.userId != session.user.id || session.session.methods.none { it == "biometric" || it == "pin" }) return@withLock
    bound(session, enrollment)
    Unit
}

/**
 * Gives an enrolment made without a proof key one (an enrolment from an older SDK): signs a fresh sign-in challenge and
 * the new key's thumbprint with the device key after the prompt, and registers the key. [session], and every later
 * session of this device's sign-ins, is then bound to it.
 *
 * @throws TouchstoneException `NOT_ENABLED` (no enrolment for this account, or a key store without proof keys), prompt
 * outcomes, `SERVER` (`proof_key_exists`, `proof_key_in_use`), `TRANSPORT`.
 */
suspend fun BiometricLogin.addProofKey(session: TouchstoneSession, reason: String = "Secure this device's sign-in"): BiometricRegistration =
    gate.withLock {
        val enrollment = requireEnrollmentWithKey()
        if (enrollment.userId != session.user.id) {
            throw TouchstoneException.notEnabled(NotEnabledReason.NEVER_ENABLED, "biometric sign-in is not enabled for this account on this device")
        }
        if (enrollment.proofKeyTag != null) {
            throw TouchstoneException.of(TouchstoneErrorCode.SERVER, "this device's enrolment has a proof key already", "proof_key_exists", null)
        }
        if (proofKeyStore == null) throw TouchstoneException.notEnabled(NotEnabledReason.NEVER_ENABLED, "this key store keeps no proof keys")
        var made: NewProofKey? = null
        try {
            val grant = client.startAuthentication(enrollment.registrationId)
            val key = makeProofKey(enrollment.keyTag, grant.challenge, attest = keyAttestation)!!
            made = key
            val message = DPoPProofSigner.enrolmentMessage(grant.challenge, key.signer.publicKey)
            val signature = signWithPrompt(enrollment.keyTag, enrollment.policy, reason, message, enrollment)
            val registration = client.addProofKey(session.session.token, enrollment.registrationId, grant.challenge, signature,
                key.signer.publicKey, key.signer.signRaw(message), key.attestationChain)
            stateStore.saveEnrollment(enrollment.copy(proofKeyTag = key.signer.tag))
            client.bind(session.session.token, key.signer)
            registration
        } catch (e: TouchstoneException) {
            made?.let { runCatching { proofKeyStore?.deleteProofKey(it.signer.tag) } }
            throw handleSignInError(e, enrollment)
        }
    }
