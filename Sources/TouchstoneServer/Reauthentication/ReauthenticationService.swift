import Foundation
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore
import TouchstoneWebAuthn

/// Fresh strong authentication in a live session (issue #42): a password, a passkey with user verification or a
/// device key proven again moves the session's `authenticatedAt`, `methods` and strong-proof time, so privileged acts
/// (docs/security.md, "Fresh strong authentication") are allowed for `TOUCHSTONE_REAUTH_SECONDS` more. A PIN never is.
///
/// The passkey and device-key challenges are self-contained (nothing is stored when they are issued) and bound to the
/// session: the MAC covers the session's token hash, so a challenge issued to one session is useless in any other and
/// in any sign-in. Each is single use: answering records it, in the transaction that updates the session.
struct ReauthenticationService: Sendable {
    let store: any TouchstoneStore
    let sessions: SessionManager
    let passwords: PasswordSignIn
    let passkeys: PasskeyService
    let deviceKeys: BiometricService
    let audit: AuditLog
    let now: @Sendable () -> Date

    /// A proof, as `POST /v1/session/reauthenticate` takes it.
    enum Proof: Sendable {
        case password(InputRules.Password)
        case passkey(AuthenticationResponseJSON)
        case deviceKey(registrationId: String, challenge: String, signature: [UInt8])
    }

    /// What a challenge is bound to: this session (and, for a device key, the registration that will sign it).
    static func binding(_ caller: AuthenticatedSession, registrationId: String? = nil) -> String {
        "reauthenticate:" + caller.session.tokenHash + (registrationId.map { ":" + $0 } ?? "")
    }

    // MARK: Challenges

    /// `POST /v1/session/reauthenticate/passkey-options`: request options listing the user's passkeys, with user
    /// verification required.
    ///
    /// - Throws: 409 `no_passkeys`.
    func passkeyOptions(_ caller: AuthenticatedSession) async throws -> RequestOptionsJSON {
        let passkeys = try await self.store.passkeys(userId: caller.user.id)
        guard !passkeys.isEmpty else { throw APIError.noPasskeys }
        let expiresAt = self.now().addingTimeInterval(self.passkeys.settings.timeout.timeInterval)
        let challenge = self.passkeys.challenges.issue(
            for: Self.binding(caller),
            expiresAtMillis: expiresAt.millis,
            nonce: self.passkeys.secrets.randomBytes(SelfContainedChallenges.nonceLength)
        )
        return RequestOptionsJSON(
            challenge: challenge,
            timeout: self.passkeys.timeoutMilliseconds,
            rpId: self.passkeys.relyingParty.id,
            allowCredentials: passkeys.map { .init(id: $0.credentialId) },
            userVerification: UserVerificationRequirement.required.rawValue,
            hints: nil
        )
    }

    /// `POST /v1/session/reauthenticate/device-key-challenge`: a challenge for one of the caller's active device keys.
    ///
    /// - Throws: 404 `registration_not_found` (not the caller's, or pending), 403 `registration_locked` and
    ///   `registration_revoked`, 403 `biometrics_disabled`.
    func deviceKeyChallenge(_ caller: AuthenticatedSession, registrationId: String) async throws -> BiometricService.StartedChallenge {
        guard self.deviceKeys.policy.current.biometricsEnabled else { throw APIError.biometricsDisabled }
        let registration = try await self.activeRegistration(of: caller, id: registrationId)
        let expiresAt = Date(millis: self.now().addingTimeInterval(self.deviceKeys.configuration.challengeTTL.timeInterval).millis)
        let challenge = self.deviceKeys.challenges.issue(
            for: Self.binding(caller, registrationId: registration.id),
            expiresAtMillis: expiresAt.millis,
            nonce: self.deviceKeys.secrets.randomBytes(SelfContainedChallenges.nonceLength)
        )
        return .init(registrationId: registration.id, challenge: challenge, expiresAt: expiresAt)
    }

    // MARK: Re-authenticating

    /// Checks the proof and records it in the session; returns the session as it now is.
    func reauthenticate(_ caller: AuthenticatedSession, with proof: Proof, client: ClientInfo) async throws -> SessionRecord {
        switch proof {
        case .password(let password):
            return try await self.withPassword(caller, password, client: client)
        case .passkey(let response):
            return try await self.audit.failures(.sessionReauthenticated, userId: caller.user.id) {
                try await self.withPasskey(caller, response)
            }
        case .deviceKey(let registrationId, let challenge, let signature):
            return try await self.audit.failures(.sessionReauthenticated, userId: caller.user.id, registrationId: registrationId) {
                try await self.withDeviceKey(caller, registrationId: registrationId, challenge: challenge, signature: signature)
            }
        }
    }

    /// The account's password, with every check of a password sign-in (throttle, limits, the same answer for a wrong
    /// password as for an account without one).
    private func withPassword(_ caller: AuthenticatedSession, _ password: InputRules.Password, client: ClientInfo) async throws -> SessionRecord {
        let now = self.now()
        let event = self.audit.event(.sessionReauthenticated, userId: caller.user.id, reason: AuthenticationMethod.password.rawValue)
        return try await self.passwords.signIn(email: caller.user.email, password: password, client: client, event: event) { user, tx in
            guard user.id == caller.user.id,
                try await tx.reauthenticateSession(tokenHash: caller.session.tokenHash, at: now, methods: [.password], strongAuthenticatedAt: now, acr: nil)
            else {
                throw APIError.unauthenticated("the session was signed out")
            }
            return (Self.updated(caller.session, method: .password, acr: nil, at: now), sessionCreated: false)
        }
    }

    private func withPasskey(_ caller: AuthenticatedSession, _ response: AuthenticationResponseJSON) async throws -> SessionRecord {
        let now = self.now()
        let decoded: (credentialId: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?)
        do {
            decoded = try response.decoded()
        } catch {
            throw APIError.invalidRequest(error.reason)
        }
        let challengeBytes: [UInt8]
        do {
            challengeBytes = try CollectedClientData(bytes: decoded.clientDataJSON).challenge
        } catch {
            throw APIError.invalidPasskeyAssertion(error)
        }
        let challenge = Base64.urlEncode(challengeBytes)
        guard SelfContainedChallenges.isWellFormed(challenge),
            let expiry = self.passkeys.challenges.expiry(of: challenge, for: Self.binding(caller))
        else {
            throw APIError.challengeNotFound
        }
        guard now.millis < expiry else { throw APIError.challengeExpired }
        guard let passkey = try await self.store.passkey(credentialId: Base64.urlEncode(decoded.credentialId)),
            passkey.userId == caller.user.id
        else {
            throw APIError.passkeyNotFoundForLogin
        }
        guard passkey.lockedAt == nil else { throw APIError.passkeyLocked }
        let verified: VerifiedAuthentication
        do {
            verified = try await self.passkeys.checkAssertion(
                by: passkey,
                credentialId: decoded.credentialId,
                clientDataJSON: decoded.clientDataJSON,
                authenticatorData: decoded.authenticatorData,
                signature: decoded.signature,
                userHandle: decoded.userHandle,
                challenge: challengeBytes,
                allowCredentials: []
            )
        } catch let error as WebAuthnError {
            throw APIError.invalidPasskeyAssertion(error)
        }
        guard verified.userVerified else {
            throw APIError.invalidPasskeyAssertion(WebAuthnError(.userNotVerified, "re-authentication needs user verification"))
        }
        let acr = (passkey.backupEligible || verified.backupEligible) ? ACR.phr.rawValue : ACR.phrh.rawValue
        let answered = WebAuthnChallengeRecord(
            challenge: challenge,
            purpose: .authentication,
            userId: nil,
            allowCredentials: [],
            createdAt: now,
            expiresAt: Date(millis: expiry).addingTimeInterval(BiometricService.answeredChallengeRetention)
        )
        let event = self.audit.event(.sessionReauthenticated, userId: caller.user.id, passkeyId: passkey.id, reason: AuthenticationMethod.passkey.rawValue)
        // The challenge's use, the passkey's use and the session's new proof commit together.
        let done = try await self.audit.commit(event) { tx in
            guard try await tx.recordAnsweredWebAuthnChallenge(answered, at: now) else { return false }
            try await tx.recordUse(of: passkey.id, verified, at: now)
            guard try await tx.reauthenticateSession(tokenHash: caller.session.tokenHash, at: now, methods: [.passkey], strongAuthenticatedAt: now, acr: acr)
            else {
                throw APIError.unauthenticated("the session was signed out")
            }
            return true
        }
        guard done else { throw APIError.challengeNotFound }
        return Self.updated(caller.session, method: .passkey, acr: acr, at: now)
    }

    private func withDeviceKey(
        _ caller: AuthenticatedSession,
        registrationId: String,
        challenge: String,
        signature: [UInt8]
    ) async throws -> SessionRecord {
        guard self.deviceKeys.policy.current.biometricsEnabled else { throw APIError.biometricsDisabled }
        let now = self.now()
        guard let expiry = self.deviceKeys.challenges.expiry(of: challenge, for: Self.binding(caller, registrationId: registrationId)) else {
            throw APIError.challengeNotFound
        }
        guard now.millis < expiry else { throw APIError.challengeExpired }
        let registration = try await self.activeRegistration(of: caller, id: registrationId)
        let answered = ChallengeRecord(
            challenge: challenge,
            registrationId: registration.id,
            purpose: .authentication,
            createdAt: now,
            expiresAt: Date(millis: expiry).addingTimeInterval(BiometricService.answeredChallengeRetention)
        )
        guard try self.deviceKeys.verify(signature, over: challenge, by: registration) else {
            // One attempt per challenge, whatever its outcome; a wrong signature counts toward the lockout.
            guard try await self.store.recordAnsweredChallenge(answered, at: now) else { throw APIError.challengeNotFound }
            try await self.audit.recordLockout(registration: registration, threshold: Int64(self.deviceKeys.policy.current.lockoutThreshold), at: now)
            throw APIError.invalidSignature
        }
        let event = self.audit.event(
            .sessionReauthenticated, userId: caller.user.id, registrationId: registration.id, reason: AuthenticationMethod.biometric.rawValue)
        let done = try await self.audit.commit(event) { tx in
            guard try await tx.recordAnsweredChallenge(answered, at: now) else { return false }
            guard try await tx.reauthenticateSession(tokenHash: caller.session.tokenHash, at: now, methods: [.biometric], strongAuthenticatedAt: now, acr: nil)
            else {
                throw APIError.unauthenticated("the session was signed out")
            }
            return true
        }
        guard done else { throw APIError.challengeNotFound }
        return Self.updated(caller.session, method: .biometric, acr: nil, at: now)
    }

    // MARK: Helpers

    private func activeRegistration(of caller: AuthenticatedSession, id: String) async throws -> RegistrationRecord {
        guard let registration = try await self.store.registration(id: id), registration.userId == caller.user.id,
            registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        guard registration.status != .locked else { throw APIError.registrationLocked }
        guard registration.status == .active else { throw APIError.registrationRevoked }
        return registration
    }

    /// The session as the store now holds it (what `reauthenticateSession` wrote).
    private static func updated(_ session: SessionRecord, method: AuthenticationMethod, acr: String?, at now: Date) -> SessionRecord {
        var session = session
        session.authenticatedAt = now
        session.methods = [method]
        session.strongAuthenticatedAt = now
        session.acr = acr
        return session
    }
}
