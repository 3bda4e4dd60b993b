extension BiometricLogin {
    /// Proves this device's key again in `session` after the biometric prompt, so privileged acts (adding a device or
    /// a passkey, a PIN, the address, the password, recovery codes, the export, deletion) are allowed for the server's
    /// window: a PIN session, or any session past the window, becomes fresh. Returns the session as it now is (the
    /// same token, `methods: ["biometric"]`).
    ///
    /// - Throws: ``BiometricLoginError``: `.notEnabled`, prompt outcomes, `.registrationLocked`,
    ///   `.registrationRevoked` (local state deleted), `.server` (`invalid_signature`, `challenge_expired`...),
    ///   `.transport`.
    public func reauthenticate(session: TouchstoneSession, reason: String) async throws -> TouchstoneSession {
        let enrollment = try await self.requireEnrollmentWithKey()
        let token = session.session.token
        do {
            let grant = try await self.client.reauthenticationChallenge(registrationId: enrollment.registrationId, token: token)
            let verification = try await self.verifier.verifyUser(reason: reason)
            let signature = try await self.sign(Array(grant.challenge.utf8), with: enrollment, verification: verification)
            let info = try await self.client.reauthenticate(
                registrationId: enrollment.registrationId, challenge: grant.challenge, signature: signature, token: token)
            return TouchstoneSession(user: session.user, session: info)
        } catch let error as BiometricLoginError {
            throw try await self.handleLoginError(error, enrollment: enrollment)
        }
    }
}
