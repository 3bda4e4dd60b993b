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
        return CreationOptionsJSON(
            rp: .init(id: self.passkeys.relyingParty.id, name: self.passkeys.relyingParty.name),
            user: .init(id: Base64.urlEncode(PasskeyService.userHandle(of: userId)), name: email, displayName: displayName ?? email),
            challenge: challenge,
            pubKeyCredParams: self.passkeys.relyingParty.algorithms.map { .init(alg: $0.rawValue) },
            timeout: self.passkeys.timeoutMilliseconds,
            excludeCredentials: [],
            authenticatorSelection: .init(userVerification: UserVerificationRequirement.required.rawValue),
            attestation: self.passkeys.settings.attestation,
            hints: hints.map { $0.map(\.rawValue) } ?? (self.passkeys.settings.hints.isEmpty ? nil : self.passkeys.settings.hints)
        )
    }

    /// - Throws: 401 `challenge_not_found` (unknown, used, or another ceremony's), `challenge_expired`; 400
    ///   `invalid_passkey_registration`; 403 `authenticator_not_allowed`, `sign_up_disabled`; 409 `email_taken`,
    ///   `passkey_already_registered`.
    func verify(_ response: RegistrationResponseJSON, name: String?) async throws -> (UserRecord, String, SessionRecord) {
        guard self.enabled else { throw APIError.signUpDisabled }
        let now = self.now()
        let decoded: (credentialId: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8])
        do {
            decoded = try response.decoded()
        } catch {
            throw APIError.invalidRequest(error.reason)
        }
        let challenge: String
        do {
            challenge = Base64.urlEncode(try CollectedClientData(bytes: decoded.clientDataJSON).challenge)
        } catch {
            throw APIError.invalidPasskeyRegistration(error)
        }
        guard let pending = try await self.store.consumePendingSignUp(id: challenge, kind: .passkey) else { throw APIError.challengeNotFound }
        guard now < pending.expiresAt else { throw APIError.challengeExpired }
        let (passkey, verified) = try await self.passkeys.verifyNewCredential(
            rawId: decoded.credentialId, clientDataJSON: decoded.clientDataJSON, attestationObject: decoded.attestationObject,
            challenge: challenge, userId: pending.userId, name: name, mediation: .modal, requireUserVerification: true, at: now)
        let user = UserRecord(id: pending.userId, email: pending.email, displayName: pending.displayName, passwordHash: nil, createdAt: now)
        var (token, session) = self.sessions.make(for: user, method: .passkey)
        session.strongAuthenticatedAt = now  // user verification was required
        session.acr = verified.backupEligible ? ACR.phr.rawValue : ACR.phrh.rawValue
        var created = self.audit.event(.userCreated, userId: user.id, reason: "passkey", webhookData: ["email": .string(user.email)])
        if let opened = self.audit.webhook(
            "session.created",
            data: ["userId": .string(user.id), "method": .string("sign_up"), "registrationId": .null, "passkeyId": .string(passkey.id)]
        ) {
            created.webhooks.append(opened)
        }
        let events = [created, self.audit.event(.passkeyAdded, userId: user.id, passkeyId: passkey.id, reason: "sign_up")]
        let verification = try await self.recovery.signUpVerification(for: user)
        let stored = session
        do {
            try await self.store.unitOfWork { tx in
                try await tx.insertUser(user)
                try await tx.insertPasskey(passkey)
                try await tx.insertSession(stored)
                for event in events { try await tx.insertAuditEvent(event) }
                if let (challenge, mail) = verification {
                    try await tx.replaceEmailChallenge(challenge)
                    try await tx.enqueueMail(mail)
                }
            }
        } catch let error as StoreError where error == .conflict {
            // The address or the credential id (each unique): the address is the one a person can do something about.
            if try await self.store.user(email: user.email) != nil { throw APIError.emailTaken }
            throw APIError.passkeyAlreadyRegistered
        }
        self.audit.committed(events)
        if verification != nil { self.recovery.mailer.committed() }
        return (user, token, session)
    }
}
