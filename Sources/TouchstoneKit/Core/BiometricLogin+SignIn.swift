public import Foundation

extension BiometricLogin {
    /// The sign-in requests waiting for this phone: a browser on a computer, or an app's backend (CIBA). Never
    /// prompts: reading uses the device credential kept since enrolment.
    ///
    /// ```swift
    /// // When a push (or the app's backend) says a request waits:
    /// for request in try await biometrics.pendingSignInRequests() {
    ///     let picked = await showNumbers(request.numbers, from: request.client)   // nil: "It wasn't me"
    ///     if let picked { try await biometrics.approveSignIn(request, choice: picked) }
    ///     else { try await biometrics.declineSignIn(request, reason: .notMe) }
    /// }
    /// ```
    ///
    /// - Throws: ``BiometricLoginError``: `.notEnabled`, `.deviceCredentialInvalid` (none stored, or the server no
    ///   longer accepts it: ``renewDeviceCredential(session:)``), `.registrationLocked`, `.server`, `.transport`.
    public func pendingSignInRequests() async throws -> [SignInRequest] {
        let (enrollment, credential) = try await self.deviceCredential()
        let requests = try await self.client.pendingSignInRequests(registrationId: enrollment.registrationId, deviceCredential: credential)
        // Only what is for this account can be shown (the server sends nothing else).
        return requests.filter { $0.payload.userId == enrollment.userId }
    }

    /// Approves a sign-in: checks the request is for this account and `choice` one of its numbers, shows the
    /// biometric prompt, signs the payload with the decision, and sends it.
    ///
    /// - Parameter choice: The number the user picked (nil for a backchannel request, which has none).
    /// - Throws: ``BiometricLoginError``: `.signInRequestMismatch` (nothing was signed), `.wrongNumber` (the server
    ///   declined the request), `.signInRequestExpired`, `.signInRequestNotPending`, prompt outcomes,
    ///   `.registrationLocked`, `.registrationRevoked`, `.server`, `.transport`.
    public func approveSignIn(_ request: SignInRequest, choice: Int?) async throws {
        if request.needsNumber {
            guard let choice, request.numbers.contains(choice) else {
                throw BiometricLoginError(.signInRequestMismatch, "pick one of the numbers offered")
            }
        } else if choice != nil {
            throw BiometricLoginError(.signInRequestMismatch, "this request has no number: check its binding message instead")
        }
        try await self.decide(request, .approve(choice: choice), reason: "Sign in to \(request.client)?")
    }

    /// Declines a sign-in; `.notMe` tells the app's backend someone else tried (and may pause phone approvals for the
    /// account). The decision is signed too, after the biometric prompt, so that only this phone can decline.
    public func declineSignIn(_ request: SignInRequest, reason: SignInDeclineReason) async throws {
        try await self.decide(request, .decline(reason), reason: reason == .notMe ? "Report this sign-in" : "Decline this sign-in")
    }

    /// Reads a request whose QR code the phone scanned (`touchstone://sign-in?...`), for this server only: a code
    /// for another server is refused before anything is sent.
    ///
    /// - Throws: `.signInRequestMismatch` (not a sign-in code, or for another server), and as
    ///   ``pendingSignInRequests()``.
    public func signInRequest(scannedURL: URL) async throws -> SignInRequest {
        guard let scanned = ScannedSignIn(url: scannedURL) else {
            throw BiometricLoginError(.signInRequestMismatch, "this is not a Touchstone sign-in code")
        }
        guard let base = self.client.transport.serverURL, Self.sameOrigin(scanned.server, base) else {
            throw BiometricLoginError(.signInRequestMismatch, "this sign-in code is for another server (\(scanned.server))")
        }
        let (enrollment, credential) = try await self.deviceCredential()
        let request = try await self.client.scannedSignInRequest(scanned, registrationId: enrollment.registrationId, deviceCredential: credential)
        guard request.payload.userId == enrollment.userId, request.requestId == scanned.requestId else {
            throw BiometricLoginError(.signInRequestMismatch, "the scanned request is not for this account")
        }
        return request
    }

    /// Reads a scanned request, lets the user pick the number the computer shows (`choose` gets the numbers; nil
    /// declines with `.cancel`), and approves it.
    public func approveSignIn(scannedURL: URL, choose: @Sendable ([Int]) async -> Int?) async throws {
        let request = try await self.signInRequest(scannedURL: scannedURL)
        guard request.needsNumber else {
            try await self.approveSignIn(request, choice: nil)
            return
        }
        guard let choice = await choose(request.numbers) else {
            try await self.declineSignIn(request, reason: .cancel)
            return
        }
        try await self.approveSignIn(request, choice: choice)
    }

    /// Gets a new device credential for this device's registration (for one enrolled before they existed, or when the
    /// server refused the stored one) with a session of its account.
    public func renewDeviceCredential(session: TouchstoneSession) async throws {
        guard let enrollment = try await self.stateStore.loadEnrollment(), enrollment.userId == session.user.id else {
            throw BiometricLoginError(.notEnabled, "biometric sign-in is not enabled for this account on this device")
        }
        guard let store = self.credentialStore else {
            throw BiometricLoginError(.deviceCredentialInvalid, "no credential store is configured")
        }
        let credential = try await self.client.issueDeviceCredential(token: session.session.token, registrationId: enrollment.registrationId)
        try await store.saveDeviceCredential(credential, registrationId: enrollment.registrationId)
    }

    /// Registers the APNs device token (from `didRegisterForRemoteNotificationsWithDeviceToken`) so the server pushes
    /// new requests to this phone.
    public func registerPushToken(_ token: Data) async throws {
        let (enrollment, credential) = try await self.deviceCredential()
        try await self.client.registerPushToken(Array(token), registrationId: enrollment.registrationId, deviceCredential: credential)
    }

    // MARK: Helpers

    private func decide(_ request: SignInRequest, _ decision: SignInDecision, reason: String) async throws {
        let enrollment = try await self.requireEnrollmentWithKey()
        guard request.payload.userId == enrollment.userId, request.payload.requestId == request.requestId, request.payload.version == 1 else {
            throw BiometricLoginError(.signInRequestMismatch, "the request is for another account than this device's")
        }
        do {
            let verification = try await self.verifier.verifyUser(reason: reason)
            let signature = try await self.sign(request.payload.signedBytes(decision), with: enrollment, verification: verification)
            try await self.client.decideSignInRequest(
                id: request.requestId, registrationId: enrollment.registrationId, decision: decision, signature: signature)
        } catch let error as BiometricLoginError {
            throw try await self.handleLoginError(error, enrollment: enrollment)
        }
    }

    private func deviceCredential() async throws -> (LocalEnrollment, String) {
        guard let enrollment = try await self.stateStore.loadEnrollment() else {
            throw BiometricLoginError(.notEnabled, "biometric sign-in is not enabled on this device")
        }
        guard let credential = try await self.credentialStore?.loadDeviceCredential(registrationId: enrollment.registrationId) else {
            throw BiometricLoginError(.deviceCredentialInvalid, "no device credential is stored: renew it with a session")
        }
        return (enrollment, credential)
    }

    /// Whether `server` (a scanned code's issuer) is the origin of `base` (the client's server).
    static func sameOrigin(_ server: String, _ base: URL) -> Bool {
        guard let scanned = URLComponents(string: server), let ours = URLComponents(url: base, resolvingAgainstBaseURL: false) else { return false }
        func port(_ components: URLComponents) -> Int? { components.port ?? (components.scheme == "https" ? 443 : components.scheme == "http" ? 80 : nil) }
        return scanned.scheme?.lowercased() == ours.scheme?.lowercased() && scanned.host?.lowercased() == ours.host?.lowercased()
            && port(scanned) == port(ours)
    }
}
