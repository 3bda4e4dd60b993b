import Foundation
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore
import TouchstoneWebAuthn
import TouchstoneWebhooks

/// Passkey-first sign-up (issue #42): an account created with a passkey and no password.
///
/// The options bind a pending sign-up (the new user id, the address, the name) to a fresh WebAuthn challenge; the
/// verify consumes it (single use, whatever the outcome), runs every check of a passkey registration with user
/// verification required, and creates the account, its passkey, its first session, its events and its verification
/// mail in one unit of work.
struct PasskeySignUpService: Sendable {
    let store: any TouchstoneStore
    let passkeys: PasskeyService
    let sessions: SessionManager
    let audit: AuditLog
    let recovery: RecoveryService
    let now: @Sendable () -> Date
    /// `TOUCHSTONE_SIGN_UP`.
    let enabled: Bool

    func options(email: String, displayName: String?, hints: [PasskeyHint]?) async throws -> CreationOptionsJSON {
        guard self.enabled else { throw APIError.signUpDisabled }
        // As password sign-up answers: an address with an account is taken.
        guard try await self.store.user(email: email) == nil else { throw APIError.emailTaken }
        let now = self.now()
        let userId = self.passkeys.secrets.newIdentifier()
        let challenge = self.passkeys.secrets.newChallenge()
        try await self.store.insertPendingSignUp(
            PendingSignUpRecord(
                id: challenge,
                kind: .passkey,
                userId: userId,
                email: email,
                displayName: displayName,
                createdAt: now,
                expiresAt: now.addingTimeInterval(self.passkeys.settings.timeout.timeInterval)
            )
        )
        self.audit.metrics?.started(.passkeyRegistration)
        return self.passkeys.creationOptions(
            userId: userId, email: email, displayName: displayName, challenge: challenge, excluding: [], userVerification: .required, hints: hints)
    }

    /// - Throws: 401 `challenge_not_found` (unknown, used, or another ceremony's), `challenge_expired`; 400
    ///   `invalid_passkey_registration`; 403 `authenticator_not_allowed`, `sign_up_disabled`; 409 `email_taken`,
    ///   `passkey_already_registered`.
    func verify(_ response: RegistrationResponseJSON, name: String?) async throws -> (UserRecord, String, SessionRecord) {
        guard self.enabled else { throw APIError.signUpDisabled }
        let now = self.now()
        let decoded = try PasskeyService.registrationParts(response)
        let challenge = decoded.challenge
        guard let pending = try await self.store.consumePendingSignUp(id: challenge, kind: .passkey) else { throw APIError.challengeNotFound }
        guard now < pending.expiresAt else { throw APIError.challengeExpired }
        let (passkey, verified) = try await self.passkeys.verifyNewCredential(
            rawId: decoded.credentialId, clientDataJSON: decoded.clientDataJSON, attestationObject: decoded.attestationObject,
            challenge: challenge, userId: pending.userId, name: name, mediation: .modal, requireUserVerification: true, at: now)
        let user = UserRecord(id: pending.userId, email: pending.email, displayName: pending.displayName, passwordHash: nil, createdAt: now)
        var (token, session) = self.sessions.make(for: user, method: .passkey)
        session.strongAuthenticatedAt = now  // user verification was required
        session.acr = verified.backupEligible ? ACR.phr.rawValue : ACR.phrh.rawValue
        let added = self.audit.event(.passkeyAdded, userId: user.id, passkeyId: passkey.id, reason: "sign_up")
        let store = self.store
        try await NewAccount(store: self.store, audit: self.audit, recovery: self.recovery).commit(
            user: user, session: session, how: "passkey", passkeyId: passkey.id, events: [added],
            credential: { tx in try await tx.insertPasskey(passkey) },
            conflict: {
                // The address or the credential id (each unique): the address is the one a person can do something about.
                try await store.user(email: user.email) != nil ? APIError.emailTaken : APIError.passkeyAlreadyRegistered
            }
        )
        return (user, token, session)
    }
}
