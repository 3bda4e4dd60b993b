package dev.touchstone.kit

/**
 * The secure preferences of the SDK: the local enrolment, the device's stable id and the device credential that
 * reads sign-in requests without a prompt. Nothing here unlocks a sign-in by itself, but the device credential is a
 * secret: keep it encrypted on this device only (the Android adapter seals every value with AES-GCM under a
 * Keystore key, [SealedStateStore]).
 *
 * A store whose contents cannot be read (decryption fails, the data is damaged) throws [LocalStateUnreadableException]
 * from its loads; [BiometricLogin] then wipes it and reports "not enabled".
 */
interface LocalStateStore {
    /** The enrolment, or null when there is none; throws [LocalStateUnreadableException] when it cannot be read. */
    suspend fun loadEnrollment(): LocalEnrollment?

    /** Stores [enrollment], replacing the previous one. */
    suspend fun saveEnrollment(enrollment: LocalEnrollment)

    /** Forgets the enrolment (the device id stays). */
    suspend fun clearEnrollment()

    /** A stable identifier for this installation, created on first use and kept across enable and disable. */
    suspend fun deviceId(): String

    /** The stored device credential, if it belongs to [registrationId]. */
    suspend fun loadDeviceCredential(registrationId: String): String?

    /** Keeps [credential] for [registrationId], replacing any other. */
    suspend fun saveDeviceCredential(credential: String, registrationId: String)

    /** Forgets the device credential. */
    suspend fun clearDeviceCredential()

    /** Forgets everything, the device id included (after [LocalStateUnreadableException]). */
    suspend fun wipe()
}
