extension BiometricLogin {
    /// Creates an account from this device with a device key: no password, no passkey (issue #42).
    ///
    /// Makes a key pair, sends it with the address (and an App Attest proof where available), signs the server's
    /// challenge after the biometric prompt, and keeps the enrolment as ``enable(session:deviceName:reason:)`` does.
    /// The account's address is unverified until the mailed code is entered. If anything fails, the new key is deleted.
    ///
    /// - Returns: The new account's first session (`methods: ["biometric"]`, strong: it may add a passkey at once).
    /// - Throws: ``BiometricLoginError``: `.enabledForAnotherAccount` when this device is enabled already, the device
    ///   availability codes, prompt outcomes, `.server` (`email_taken`, `sign_up_disabled`,
    ///   `device_enrolled_for_another_user`...), `.transport`.
    public func signUp(
        email: String,
        displayName: String? = nil,
        deviceName: String? = nil,
        reason: String = "Create your account"
    ) async throws -> TouchstoneSession {
        if let previous = try await self.stateStore.loadEnrollment() {
            throw BiometricLoginError(
                .enabledForAnotherAccount,
                "biometric sign-in on this device belongs to \(previous.email ?? "another account"); disable it first"
            )
        }
        try await self.requireDeviceAndServerAllowEnrolment()
        let deviceId = try await self.stateStore.deviceId()
        let tag = self.makeKeyTag()
        let publicKey = try await self.keyStoreCall {
            try await self.keyStore.createKey(tag: tag, algorithm: self.algorithm, policy: self.accessPolicy)
        }
        let signedUp: (session: TouchstoneSession, registration: BiometricRegistration, deviceCredential: String)
        var proofKey: DPoPProofSigner?
        do {
            proofKey = try await self.makeProofKey(tag: tag)
            let grant = try await self.client.startSignUp(
                email: email,
                displayName: displayName,
                publicKey: publicKey,
                deviceId: deviceId,
                deviceName: deviceName,
                appAttest: try await self.appAttestProof(for: publicKey)
            )
            let verification = try await self.verifier.verifyUser(reason: reason)
            let message = DPoPProofSigner.enrolmentMessage(challenge: grant.challenge, proofKey: proofKey?.publicKey)
            let signature = try await self.keyStoreCall {
                try await self.keyStore.sign(message, withKey: tag, verification: verification)
            }
            signedUp = try await self.client.finishSignUp(
                signUpId: grant.signUpId, signature: signature, proofKey: try await self.proofKeyEnrolment(proofKey, challenge: grant.challenge))
        } catch {
            try? await self.keyStore.deleteKey(tag: tag)
            if proofKey != nil { try? await self.proofKeyStore?.deleteProofKey(tag: tag) }
            throw Self.enableError(error)
        }
        var enrollment = LocalEnrollment(
            userId: signedUp.session.user.id,
            registrationId: signedUp.registration.id,
            keyTag: tag,
            algorithm: self.algorithm,
            email: signedUp.session.user.email
        )
        enrollment.proofKeyTag = proofKey.map { _ in tag }
        try await self.stateStore.saveEnrollment(enrollment)
        let session = try await self.bound(signedUp.session, enrollment)
        if let store = self.credentialStore {
            try await store.saveDeviceCredential(signedUp.deviceCredential, registrationId: signedUp.registration.id)
        }
        return session
    }
}
