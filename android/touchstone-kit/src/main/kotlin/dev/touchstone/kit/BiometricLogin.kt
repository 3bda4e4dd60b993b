package dev.touchstone.kit

import java.security.SignatureException
import java.util.Base64
import java.util.UUID

/**
 * Biometric sign-in with a device-bound key: the flows of TouchstoneKit's `BiometricLogin`, with the same server
 * contract and error codes.
 *
 * ```kotlin
 * val biometrics = BiometricLogin(
 *     client = TouchstoneClient("https://auth.example.com"),
 *     keyStore = KeystoreDeviceKeyStore(),                 // SoftwareKeyStore on the JVM and in tests
 *     verifier = BiometricPromptVerifier(activity),
 *     stateStore = EncryptedPreferencesStateStore(context),
 * )
 * // After a password sign-in, on a settings toggle:
 * biometrics.enable(passwordSession, deviceName = "Ana's Pixel")
 * // On the next launch:
 * val session = biometrics.signIn(reason = "Sign in to Example")
 * ```
 *
 * Calls are serialised: an `enable` and a `signIn` never interleave.
 *
 * @param policy How new keys may be used (and what the prompt allows); see [KeyAccessPolicy].
 * @param keyAttestation Whether enrolment asks the server for an attestation challenge and sends the key's chain
 * (skipped when the server has Android key attestation off).
 * @param makeKeyTag Names new keys; a random UUID under `touchstone.` by default.
 */
class BiometricLogin(
    val client: TouchstoneClient,
    internal val keyStore: DeviceKeyStore,
    internal val verifier: UserVerifier,
    internal val stateStore: LocalStateStore,
    internal val policy: KeyAccessPolicy = KeyAccessPolicy.BIOMETRY_CURRENT_SET,
    internal val keyAttestation: Boolean = true,
    internal val makeKeyTag: () -> String = { "touchstone.${UUID.randomUUID()}" },
) {
    internal val gate = SerialGate()

    /** Whether biometric sign-in can be offered, and why not. */
    sealed class Availability {
        object Available : Availability()
        /** The device cannot (hardware, enrolment, screen lock, lockout). */
        data class DeviceUnavailable(val reason: BiometryAvailability) : Availability()
        /** The server turned biometric sign-in off, or does not accept ES256. */
        object DisabledByServer : Availability()
    }

    /** The local state, without prompting. */
    sealed class Status {
        object NotEnabled : Status()
        data class Enabled(val enrollment: LocalEnrollment) : Status()
    }

    /** Whether the device and the server allow biometric sign-in. Asks the server; never prompts. */
    suspend fun availability(): Availability {
        val device = verifier.availability(policy)
        if (device != BiometryAvailability.Available) return Availability.DeviceUnavailable(device)
        val configuration = client.configuration()
        if (!configuration.biometricsEnabled || ALGORITHM !in configuration.algorithms) return Availability.DisabledByServer
        return Availability.Available
    }

    /** The local enrolment. Never prompts, never calls the server; a store that cannot be read counts as not enabled. */
    suspend fun status(): Status = try {
        stateStore.loadEnrollment()?.let { Status.Enabled(it) } ?: Status.NotEnabled
    } catch (e: LocalStateUnreadableException) {
        Status.NotEnabled
    }

    /**
     * Enables biometric sign-in for the signed-in user on this device: creates a Keystore key (attested, when the
     * server asks for Android key attestation), registers its public key, proves possession by signing the server's
     * challenge after the biometric prompt, and stores the ids. If anything fails the new key is deleted. Enabling
     * again for the same user replaces this device's previous registration.
     *
     * @param session A session with fresh strong authentication (a password, passkey or device key within the server's
     * window; [reauthenticate] makes an older one fresh).
     * @param deviceName Shown in the user's device list.
     * @param reason The prompt's title.
     * @throws TouchstoneException `ENABLED_FOR_ANOTHER_ACCOUNT`, the device codes, prompt outcomes, or `SERVER`
     * (for example `reauthentication_required`, `invalid_key_attestation`).
     */
    suspend fun enable(session: TouchstoneSession, deviceName: String? = null, reason: String = "Enable biometric sign-in"): BiometricRegistration =
        gate.withLock {
            val previous = loadEnrollmentOrNull()
            if (previous != null && previous.userId != session.user.id) {
                throw TouchstoneException.of(TouchstoneErrorCode.ENABLED_FOR_ANOTHER_ACCOUNT,
                    "biometric sign-in on this device belongs to ${previous.email ?: "another account"}; disable it first")
            }
            requireDeviceAndServerAllowEnrolment()

            val deviceId = stateStore.deviceId()
            val challenge = if (keyAttestation) attestationChallenge(session) else null
            val tag = makeKeyTag()
            val created = keyStoreCall { keyStore.createKey(tag, policy, challenge) }
            val registration: BiometricRegistration
            val deviceCredential: String?
            var proofKey: NewProofKey? = null
            try {
                val grant = client.startRegistration(session.session.token, created.publicKey, ALGORITHM, deviceId, deviceName,
                    created.attestationChain.takeIf { challenge != null })
                // Made now, so that an attested one is attested with this enrolment's challenge.
                proofKey = makeProofKey(tag, grant.challenge, attest = challenge != null && created.attestationChain != null)
                val message = DPoPProofSigner.enrolmentMessage(grant.challenge, proofKey?.signer?.publicKey)
                val signature = signWithPrompt(tag, policy, reason, message)
                val finished = client.finishEnrolment(session.session.token, grant.registrationId, signature, proofKeyEnrolment(proofKey, grant.challenge))
                registration = finished.first
                deviceCredential = finished.second
            } catch (e: TouchstoneException) {
                runCatching { keyStore.deleteKey(tag) }
                proofKey?.let { runCatching { proofKeyStore?.deleteProofKey(it.signer.tag) } }
                if (e.serverCode == "device_enrolled_for_another_user") {
                    throw TouchstoneException.Enrollment(TouchstoneErrorCode.ENABLED_FOR_ANOTHER_ACCOUNT, e.message, e.serverCode, e.httpStatus)
                }
                throw e
            }
            stateStore.saveEnrollment(LocalEnrollment(session.user.id, registration.id, tag, policy, session.user.email, proofKeyTag = proofKey?.signer?.tag))
            if (deviceCredential != null) stateStore.saveDeviceCredential(deviceCredential, registration.id)
            // The server replaced this device's previous registration; its keys are useless now.
            if (previous != null && previous.keyTag != tag) {
                runCatching { keyStore.deleteKey(previous.keyTag) }
                previous.proofKeyTag?.let { runCatching { proofKeyStore?.deleteProofKey(it) } }
            }
            registration
        }

    /**
     * Disables biometric sign-in on this device: deletes the registration on the server first, then the key and the
     * ids. A registration the server already revoked counts as deleted; if the server cannot be reached nothing local
     * is deleted, so the user can retry.
     */
    suspend fun disable(session: TouchstoneSession) = gate.withLock {
        val enrollment = loadEnrollmentOrNull() ?: return@withLock
        try {
            client.deleteRegistration(session.session.token, enrollment.registrationId)
        } catch (e: TouchstoneException) {
            if (e.serverCode != "registration_not_found" && e.code != TouchstoneErrorCode.REGISTRATION_REVOKED) throw e
        }
        forgetLocalEnrollment(enrollment)
    }

    // App PIN

    /** Sets (or changes) the app PIN of this device's registration: 4 to 8 digits; needs a recent password session. */
    suspend fun setPin(pin: String, session: TouchstoneSession): BiometricRegistration = gate.withLock {
        val enrollment = loadEnrollmentOrNull()?.takeIf { it.userId == session.user.id }
            ?: throw TouchstoneException.notEnabled(NotEnabledReason.NEVER_ENABLED, "biometric sign-in is not enabled for this account on this device")
        val registration = client.setPin(session.session.token, enrollment.registrationId, pin)
        stateStore.saveEnrollment(enrollment.copy(pinSet = true))
        registration
    }

    /** Removes the app PIN of this device's registration. */
    suspend fun removePin(session: TouchstoneSession) = gate.withLock {
        val enrollment = loadEnrollmentOrNull()?.takeIf { it.userId == session.user.id } ?: return@withLock
        try {
            client.removePin(session.session.token, enrollment.registrationId)
        } catch (e: TouchstoneException) {
            if (e.code != TouchstoneErrorCode.PIN_NOT_SET) throw e
        }
        stateStore.saveEnrollment(enrollment.copy(pinSet = false))
    }

    /**
     * Signs in with the app PIN directly (no prompt).
     *
     * @throws TouchstoneException `PIN_INCORRECT`, `PIN_DISABLED`, `PIN_NOT_SET`, `NOT_ENABLED`, `REGISTRATION_REVOKED`...
     */
    suspend fun signInWithPin(pin: String, sessionDurationMinutes: Int? = null): TouchstoneSession = gate.withLock {
        val enrollment = requireEnrollment()
        try {
            bound(client.pinAuthentication(enrollment.registrationId, pin, sessionDurationMinutes), enrollment)
        } catch (e: TouchstoneException) {
            throw handleSignInError(e, enrollment)
        }
    }

    // Sign-in

    /**
     * Signs in with the device key: asks the server for a challenge, shows the prompt, signs, returns the session.
     *
     * With [pinFallback] and an app PIN set here, a prompt left with the negative button, or biometrics the OS has
     * locked out, lead to the PIN instead: [pinFallback] is asked (again after a wrong PIN) until it returns null,
     * the PIN is accepted, or the server disables it.
     *
     * @throws TouchstoneException `NOT_ENABLED` (see [TouchstoneException.Enrollment.reason]), `KEY_INVALIDATED`,
     * `REGISTRATION_REVOKED` (local state deleted), `REGISTRATION_LOCKED`, prompt outcomes, PIN codes, `SERVER`, `TRANSPORT`.
     */
    suspend fun signIn(reason: String, sessionDurationMinutes: Int? = null, pinFallback: PinProvider? = null): TouchstoneSession =
        gate.withLock {
            val enrollment = requireEnrollmentWithKey()
            try {
                val grant = client.startAuthentication(enrollment.registrationId)
                val signature = try {
                    signWithPrompt(enrollment.keyTag, enrollment.policy, reason, grant.challenge.toByteArray(Charsets.UTF_8), enrollment)
                } catch (e: TouchstoneException) {
                    val fallback = (e.code == TouchstoneErrorCode.USER_FALLBACK || e.code == TouchstoneErrorCode.LOCKED_OUT)
                    if (fallback && pinFallback != null && enrollment.pinSet) {
                        return@withLock pinLoop(enrollment, e, sessionDurationMinutes, pinFallback)
                    }
                    throw e
                }
                bound(client.finishAuthentication(enrollment.registrationId, grant.challenge, signature, sessionDurationMinutes), enrollment)
            } catch (e: TouchstoneException) {
                throw handleSignInError(e, enrollment)
            }
        }

    private suspend fun pinLoop(enrollment: LocalEnrollment, trigger: TouchstoneException, minutes: Int?, ask: PinProvider): TouchstoneSession {
        var previous: TouchstoneException? = null
        var attempt = 1
        while (true) {
            val pin = ask.pin(PinRequest(trigger.code, attempt, previous)) ?: throw trigger
            try {
                return bound(client.pinAuthentication(enrollment.registrationId, pin, minutes), enrollment)
            } catch (e: TouchstoneException) {
                // A wrong PIN, or one that is not 4 to 8 digits (not counted by the server): ask again.
                if (e.code != TouchstoneErrorCode.PIN_INCORRECT && e.serverCode != "invalid_request") throw e
                previous = e
                attempt += 1
            }
        }
    }

    // Shared by the flows

    /** What a failed sign-in leaves behind: a revoked or unknown registration is forgotten; a PIN the server lacks is unset. */
    internal suspend fun handleSignInError(error: TouchstoneException, enrollment: LocalEnrollment): TouchstoneException {
        if (error.code == TouchstoneErrorCode.REGISTRATION_REVOKED) {
            forgetLocalEnrollment(enrollment)
            return error
        }
        if (error.serverCode == "registration_not_found") {
            forgetLocalEnrollment(enrollment)
            return TouchstoneException.Enrollment(TouchstoneErrorCode.REGISTRATION_REVOKED, error.message, error.serverCode, error.httpStatus)
        }
        if (error.code == TouchstoneErrorCode.PIN_NOT_SET) stateStore.saveEnrollment(enrollment.copy(pinSet = false))
        return error
    }

    /**
     * Initialises the key's signer, shows the prompt for it and signs [message]. When the Keystore reports the key
     * invalidated (a biometric was enrolled) the server is told and local state forgotten ([enrollment] given).
     */
    internal suspend fun signWithPrompt(tag: String, policy: KeyAccessPolicy, reason: String, message: ByteArray, enrollment: LocalEnrollment? = null): ByteArray {
        try {
            val signer = keyStoreCall { keyStore.signer(tag) }
            val authorised = verifier.verifyUser(reason, signer, policy)
            return keyStoreCall {
                authorised.update(message)
                authorised.sign()
            }
        } catch (e: TouchstoneException) {
            if (e.code == TouchstoneErrorCode.KEY_INVALIDATED && enrollment != null) {
                reportInvalidation(enrollment, "biometry_changed")
                forgetLocalEnrollment(enrollment)
            }
            throw e
        }
    }

    /** The enrolment, or `NOT_ENABLED`; a store that cannot be read is wiped and reported as such. */
    internal suspend fun requireEnrollment(): LocalEnrollment =
        loadEnrollmentOrNull() ?: throw TouchstoneException.notEnabled(NotEnabledReason.NEVER_ENABLED, "biometric sign-in is not enabled on this device")

    /** [requireEnrollment], and a key that vanished is reported to the server and the local state forgotten. */
    internal suspend fun requireEnrollmentWithKey(): LocalEnrollment {
        val enrollment = requireEnrollment()
        if (!keyStore.keyExists(enrollment.keyTag)) {
            reportInvalidation(enrollment, "key_lost")
            forgetLocalEnrollment(enrollment)
            throw TouchstoneException.notEnabled(NotEnabledReason.KEY_LOST, "the device key no longer exists; enable biometric sign-in again")
        }
        return enrollment
    }

    internal suspend fun loadEnrollmentOrNull(): LocalEnrollment? = try {
        stateStore.loadEnrollment()
    } catch (e: LocalStateUnreadableException) {
        runCatching { stateStore.wipe() }
        throw TouchstoneException.Enrollment(TouchstoneErrorCode.NOT_ENABLED,
            "the stored enrolment could not be read and was reset; enable biometric sign-in again",
            reason = NotEnabledReason.STATE_UNREADABLE, cause = e)
    }

    /** Best effort: a server that cannot be reached keeps a registration nobody can use; the user can delete it. */
    internal suspend fun reportInvalidation(enrollment: LocalEnrollment, reason: String) {
        runCatching { client.invalidateRegistration(enrollment.registrationId, stateStore.deviceId(), reason) }
    }

    internal suspend fun forgetLocalEnrollment(enrollment: LocalEnrollment) {
        runCatching { keyStore.deleteKey(enrollment.keyTag) }
        enrollment.proofKeyTag?.let { runCatching { proofKeyStore?.deleteProofKey(it) } }
        runCatching { stateStore.clearDeviceCredential() }
        stateStore.clearEnrollment()
    }

    /** Runs a key store operation, reporting foreign failures as `INTERNAL_FAILURE`. */
    internal suspend fun <T> keyStoreCall(body: suspend () -> T): T = try {
        body()
    } catch (e: TouchstoneException) {
        throw e
    } catch (e: SignatureException) {
        throw TouchstoneException.Internal("signing failed: ${e.javaClass.simpleName}", e)
    } catch (e: Exception) {
        throw TouchstoneException.Internal("key store failure: ${e.javaClass.simpleName}: ${e.message}", e)
    }

    /** The device can make and use a key, and the server accepts biometric sign-in with ES256 keys. */
    internal suspend fun requireDeviceAndServerAllowEnrolment() {
        requireDeviceAvailable()
        val configuration = client.configuration()
        if (!configuration.biometricsEnabled) throw TouchstoneException.of(TouchstoneErrorCode.NOT_AVAILABLE, "the server does not allow biometric sign-in")
        if (ALGORITHM !in configuration.algorithms) throw TouchstoneException.of(TouchstoneErrorCode.NOT_AVAILABLE, "the server does not accept $ALGORITHM keys")
    }

    internal suspend fun requireDeviceAvailable() {
        val (code, message) = when (verifier.availability(policy)) {
            BiometryAvailability.Available -> return
            BiometryAvailability.NotAvailable -> TouchstoneErrorCode.NOT_AVAILABLE to "this device has no usable strong biometrics"
            BiometryAvailability.NotEnrolled -> TouchstoneErrorCode.NOT_ENROLLED to "no fingerprint or face is enrolled on this device"
            BiometryAvailability.PasscodeNotSet -> TouchstoneErrorCode.PASSCODE_NOT_SET to "set a screen lock to use biometric sign-in"
            BiometryAvailability.LockedOut -> TouchstoneErrorCode.LOCKED_OUT to "biometrics are locked; unlock the device with its screen lock"
        }
        throw TouchstoneException.Device(code, message)
    }

    /**
     * The attestation challenge's bytes (for the session's account, or with [session] null for a sign-up), or null
     * when the server has Android key attestation off.
     */
    internal suspend fun attestationChallenge(session: TouchstoneSession?): ByteArray? = try {
        val challenge = if (session != null) client.androidKeyAttestationChallenge(session.session.token) else client.androidKeyAttestationSignUpChallenge()
        try {
            Base64.getUrlDecoder().decode(challenge)
        } catch (e: IllegalArgumentException) {
            throw TouchstoneException.Transport(TransportFailure.UNREADABLE, "the attestation challenge is not base64url", 200, e)
        }
    } catch (e: TouchstoneException) {
        if (e.serverCode != "android_key_attestation_disabled") throw e
        null
    }

    companion object {
        /** The one algorithm of Android Keystore device keys here: ECDSA P-256 with SHA-256. */
        const val ALGORITHM = "ES256"
    }
}
