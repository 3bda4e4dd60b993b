public import Foundation

/// The phone's proof key (DPoP, issue #43). When the key store can keep one (``ProofKeyStore``: the Secure Enclave and
/// software stores), enrolment makes a second key with no biometric gate, registers it with the device key's
/// signature, and every session of this device's sign-ins is then bound to it: the client adds a proof to each of its
/// requests, and the session token is worthless anywhere else.
extension BiometricLogin {
    var proofKeyStore: (any ProofKeyStore)? { self.keyStore as? any ProofKeyStore }

    /// Makes the proof key of an enrolment whose device key is `tag`; nil when the key store keeps none.
    func makeProofKey(tag: String) async throws -> DPoPProofSigner? {
        guard let store = self.proofKeyStore else { return nil }
        let publicKey = try await self.keyStoreCall { try await store.createProofKey(tag: tag) }
        return DPoPProofSigner(store: store, tag: tag, publicKey: publicKey)
    }

    /// The proof key's part of the enrolment: its public key and its signature over `<challenge>.<thumbprint>`.
    func proofKeyEnrolment(_ signer: DPoPProofSigner?, challenge: String) async throws -> ProofKeyEnrolment? {
        guard let signer else { return nil }
        let signature = try await signer.signRaw(DPoPProofSigner.enrolmentMessage(challenge: challenge, proofKey: signer.publicKey))
        return ProofKeyEnrolment(publicKey: signer.publicKey, signature: signature)
    }

    /// `session`, from a sign-in of `enrollment`, bound to its proof key in the client (when it has one).
    func bound(_ session: TouchstoneSession, _ enrollment: LocalEnrollment) async throws -> TouchstoneSession {
        guard let tag = enrollment.proofKeyTag, let store = self.proofKeyStore,
            let publicKey = try await self.keyStoreCall({ try await store.proofKeyPublicKey(tag: tag) })
        else {
            return session
        }
        await self.client.bind(sessionToken: session.session.token, to: DPoPProofSigner(store: store, tag: tag, publicKey: publicKey))
        return session
    }

    /// Binds a session the app kept (from an earlier launch) again: a session of this device's biometric or PIN
    /// sign-in whose enrolment has a proof key gets its proofs back. Other sessions are left as they are.
    public func resume(_ session: TouchstoneSession) async throws {
        guard let enrollment = try await self.stateStore.loadEnrollment(), enrollment.userId == session.user.id,
            session.session.methods.contains(where: { $0 == "biometric" || $0 == "pin" })
        else {
            return
        }
        _ = try await self.bound(session, enrollment)
    }

    /// Gives an enrolment made without a proof key one (an enrolment from an older SDK): signs a fresh sign-in
    /// challenge and the new key's thumbprint with the device key after the biometric prompt, and registers the key.
    /// `session`, and every later session of this device's sign-ins, is then bound to it.
    ///
    /// - Throws: ``BiometricLoginError``: `.notEnabled` (no enrolment for this account, or a key store that keeps no
    ///   proof keys), prompt outcomes, `.server` (`proof_key_exists`, `proof_key_in_use`), `.transport`.
    @discardableResult
    public func addProofKey(session: TouchstoneSession, reason: String = "Secure this device's sign-in") async throws -> BiometricRegistration {
        var enrollment = try await self.requireEnrollmentWithKey()
        guard enrollment.userId == session.user.id else {
            throw BiometricLoginError(.notEnabled, "biometric sign-in is not enabled for this account on this device")
        }
        guard enrollment.proofKeyTag == nil else {
            throw BiometricLoginError(.server, "this device's enrolment has a proof key already", serverCode: "proof_key_exists")
        }
        guard let signer = try await self.makeProofKey(tag: enrollment.keyTag) else {
            throw BiometricLoginError(.notEnabled, "this key store keeps no proof keys")
        }
        do {
            let grant = try await self.client.startAuthentication(registrationId: enrollment.registrationId)
            let message = DPoPProofSigner.enrolmentMessage(challenge: grant.challenge, proofKey: signer.publicKey)
            let verification = try await self.verifier.verifyUser(reason: reason)
            let signature = try await self.sign(message, with: enrollment, verification: verification)
            let registration = try await self.client.addProofKey(
                token: session.session.token, registrationId: enrollment.registrationId, challenge: grant.challenge, signature: signature,
                proofKey: signer.publicKey, proofKeySignature: try await signer.signRaw(message))
            enrollment.proofKeyTag = enrollment.keyTag
            try await self.stateStore.saveEnrollment(enrollment)
            await self.client.bind(sessionToken: session.session.token, to: signer)
            return registration
        } catch {
            if let store = self.proofKeyStore { try? await store.deleteProofKey(tag: enrollment.keyTag) }
            if let error = error as? BiometricLoginError { throw try await self.handleLoginError(error, enrollment: enrollment) }
            throw error
        }
    }
}
