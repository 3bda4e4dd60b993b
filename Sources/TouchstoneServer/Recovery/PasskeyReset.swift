import Foundation
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore
import TouchstoneWebAuthn

/// A password reset completed by registering a new passkey instead of a new password (issue #42): how a user who lost
/// every passkey and device, or never had a password, gets back in by mail.
///
/// `POST /v1/password-resets/passkey-options` checks the mailed code or link (without using it up) and answers
/// creation options for the account; `POST /v1/password-resets/confirm` with the same code or link and the new
/// passkey runs every registration check (user verification required), then uses the code, adds the passkey, ends
/// every session and opens a strong passkey session, in one unit of work.
struct PasskeyReset: Sendable {
    let recovery: RecoveryService
    let passkeys: PasskeyService

    /// The mailed code with its address, or the link's token.
    enum Proof: Sendable {
        case code(email: String, code: String)
        case token(String)
    }

    private var store: any TouchstoneStore { self.recovery.store }

    /// The live reset challenge the proof names (a wrong code counts toward its attempts), and its user.
    private func check(_ proof: Proof) async throws -> (EmailChallengeRecord, UserRecord) {
        let challenge: EmailChallengeRecord
        switch proof {
        case .code(let email, let code):
            try await self.recovery.core.limiter.checkAccount("account:\(email)")
            let user = try await self.store.user(email: email)
            challenge = try await self.recovery.rejecting(.passwordReset, userId: user?.id) {
                try await self.recovery.challenges.check(code: code, userId: user?.id, purpose: .passwordReset)
            }
        case .token(let token):
            challenge = try await self.recovery.rejecting(.passwordReset, userId: nil) {
                try await self.recovery.challenges.check(token: token, purpose: .passwordReset)
            }
        }
        guard let user = try await self.store.user(id: challenge.userId) else { throw APIError.invalidCode }
        return (challenge, user)
    }

    func options(_ proof: Proof) async throws -> CreationOptionsJSON {
        let (_, user) = try await self.check(proof)
        let now = self.recovery.core.now()
        let challenge = self.passkeys.secrets.newChallenge()
        try await self.store.insertWebAuthnChallenge(
            WebAuthnChallengeRecord(
                challenge: challenge,
                purpose: .registration,
                userId: user.id,
                allowCredentials: [],
                createdAt: now,
                expiresAt: now.addingTimeInterval(self.passkeys.settings.timeout.timeInterval)
            )
        )
        let existing = try await self.store.passkeys(userId: user.id)
        return self.passkeys.creationOptions(
            userId: user.id, email: user.email, displayName: user.displayName, challenge: challenge,
            excluding: existing.map(\.credentialId), userVerification: .required, hints: nil)
    }

    func confirm(_ proof: Proof, response: RegistrationResponseJSON, name: String?) async throws -> RecoveryService.Reset {
        let (reset, user) = try await self.check(proof)
        let now = self.recovery.core.now()
        let decoded = try PasskeyService.registrationParts(response)
        let challenge = decoded.challenge
        guard let issued = try await self.store.consumeWebAuthnChallenge(challenge, purpose: .registration, at: now),
            issued.userId == user.id
        else {
            throw APIError.challengeNotFound
        }
        guard now < issued.expiresAt else { throw APIError.challengeExpired }
        let (passkey, verified) = try await self.passkeys.verifyNewCredential(
            rawId: decoded.credentialId, clientDataJSON: decoded.clientDataJSON, attestationObject: decoded.attestationObject,
            challenge: challenge, userId: user.id, name: name, mediation: .modal, requireUserVerification: true, at: now)
        if user.requireDeviceBoundPasskeys && verified.backupEligible { throw APIError.deviceBoundPasskeyRequired }
        var (token, session) = self.recovery.core.sessions.make(for: user, method: .passkey)
        session.acr = verified.backupEligible ? ACR.phr.rawValue : ACR.phrh.rawValue
        let audit = self.recovery.audit
        let event = audit.event(.passkeyAdded, userId: user.id, passkeyId: passkey.id, reason: "password_reset", notify: user.email)
        let stored = session
        let revoked: Int
        do {
            revoked = try await self.store.unitOfWork { tx -> Int in
                // The code or link is used here, with what it allowed: a concurrent use of it gets nothing.
                guard try await tx.consumeEmailChallenge(userId: user.id, purpose: .passwordReset, codeHash: reset.codeHash, at: now) != nil else {
                    throw APIError.invalidCode
                }
                try await tx.insertPasskey(passkey)
                let revoked = try await tx.revokeSessions(userId: user.id, keeping: nil, at: now)
                // The code proved the address is the user's.
                _ = try await tx.markEmailVerified(userId: user.id, email: reset.email, at: now)
                try await tx.insertSession(stored)
                try await tx.insertAuditEvent(event)
                return revoked
            }
        } catch let error as StoreError where error == .conflict {
            throw APIError.passkeyAlreadyRegistered
        }
        audit.committed([event])
        let updated = try await self.store.user(id: user.id) ?? user
        return RecoveryService.Reset(user: updated, revokedSessions: revoked, session: (token, session))
    }
}
