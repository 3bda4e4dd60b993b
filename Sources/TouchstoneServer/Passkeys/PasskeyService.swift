import Tracing
import Crypto
import Foundation
import Logging
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore
import TouchstoneWebAuthn

/// The passkey ceremonies around the pure verifier in TouchstoneWebAuthn: challenges, storage, sessions.
struct PasskeyService: Sendable {
    let store: any PasskeyStore & ChallengeLedger & UserStore
    let sessions: SessionManager
    let secrets: Secrets
    let now: @Sendable () -> Date
    let relyingParty: RelyingParty
    /// Parsed passkey public keys by their stored COSE bytes.
    let keys: ParsedValueCache<BytesKey, COSEKey>
    let settings: PasskeySettings
    let reauthenticationWindow: TimeInterval
    /// The lockout threshold comes from the runtime policy.
    let policy: PolicyProvider
    let audit: AuditLog
    let logger: Logger
    /// Keys the decoy credential ids of emails without passkeys (see ``authenticationOptions(email:)``).
    let decoyKey: SymmetricKey
    /// Authenticator metadata (FIDO MDS), when configured or stored by another instance.
    let metadata: AuthenticatorMetadataService?
    /// Sign-in challenges: issued without a write, checked by their MAC, recorded when answered.
    let challenges: SelfContainedChallenges

    /// What the key of sign-in challenges is derived for, from the key-encryption key every instance shares.
    static let challengePurpose = "touchstone passkey sign-in challenge v1"
    /// The binding of a sign-in challenge issued without an email: any account's passkey may answer it.
    static let anyAccount = "any"
    /// The binding of a sign-in challenge issued for an email: only a passkey of that account (an address without one
    /// gets a binding no passkey has) may answer it, as only its passkeys are in `allowCredentials`.
    static func binding(userId: String?) -> String { "user:" + (userId ?? "") }

    /// The WebAuthn user handle of a user: the UTF-8 bytes of the (random) user id, so it carries no personal data.
    static func userHandle(of userId: String) -> [UInt8] { Array(userId.utf8) }

    var timeoutMilliseconds: Int { Int(self.settings.timeout.components.seconds) * 1000 }

    // MARK: Registration

    func registrationOptions(caller: AuthenticatedSession, hints: [PasskeyHint]? = nil) async throws -> CreationOptionsJSON {
        let now = self.now()
        try await self.sessions.requireEnrolmentAllowed(caller, within: self.reauthenticationWindow)
        try self.sessions.requireVerifiedEmailForEnrolment(caller)
        let challenge = self.secrets.newChallenge()
        try await self.store.insertWebAuthnChallenge(
            WebAuthnChallengeRecord(
                challenge: challenge,
                purpose: .registration,
                userId: caller.user.id,
                allowCredentials: [],
                createdAt: now,
                expiresAt: now.addingTimeInterval(self.settings.timeout.timeInterval)
            )
        )
        let existing = try await self.store.passkeys(userId: caller.user.id)
        self.audit.metrics?.started(.passkeyRegistration)
        return self.creationOptions(
            userId: caller.user.id, email: caller.user.email, displayName: caller.user.displayName, challenge: challenge,
            excluding: existing.map(\.credentialId), userVerification: self.relyingParty.userVerification, hints: hints)
    }

    func verifyRegistration(
        caller: AuthenticatedSession,
        response: RegistrationResponseJSON,
        name: String?,
        mediation: RelyingParty.Mediation = .modal
    ) async throws
        -> PasskeyRecord
    {
        let now = self.now()
        // An automatic upgrade is made without a gesture: it must follow a password sign-in closely.
        if mediation == .conditional {
            guard caller.session.methods.contains(.password) else { throw APIError.reauthenticationRequired }
            try self.sessions.requireFreshStrongAuthentication(caller, within: self.reauthenticationWindow)
        }
        // A code session enrols one passkey: checked again here, where options were asked for before.
        if caller.session.methods == [.recoveryCode] || caller.session.methods == [.emailCode] {
            try await self.sessions.requireEnrolmentAllowed(caller, within: self.reauthenticationWindow)
        }
        try self.sessions.requireVerifiedEmailForEnrolment(caller)
        let (rawId, clientDataJSON, attestationObject) = try Self.invalidRequestOnFailure { () throws(WebAuthnError) in try response.decoded() }
        let challenge = try await self.consumeChallenge(in: clientDataJSON, purpose: .registration, at: now)
        guard challenge.userId == caller.user.id else { throw APIError.challengeNotFound }
        let (record, verified) = try await self.verifyNewCredential(
            rawId: rawId, clientDataJSON: clientDataJSON, attestationObject: attestationObject, challenge: challenge.challenge,
            userId: caller.user.id, name: name, mediation: mediation, at: now)
        if caller.user.requireDeviceBoundPasskeys && verified.backupEligible { throw APIError.deviceBoundPasskeyRequired }
        let event = self.audit.event(
            .passkeyAdded, userId: caller.user.id, passkeyId: record.id, reason: mediation == .conditional ? "conditional" : nil,
            notify: caller.user.email)
        let stored = record
        do {
            try await self.audit.commit(event) { tx in
                try await tx.insertPasskey(stored)
                return true
            }
        } catch let error as StoreError where error == .conflict {
            throw APIError.passkeyAlreadyRegistered
        }
        return record
    }

    // MARK: Authentication

    /// - Parameter email: An address already normalised by ``InputRules/email(_:field:)``, or `nil` for a
    ///   username-less sign-in.
    func authenticationOptions(email: String?, hints: [PasskeyHint]? = nil) async throws -> RequestOptionsJSON {
        let now = self.now()
        var userId: String?
        var allowed: [String] = []
        if let email {
            if let user = try await self.store.user(email: email) {
                userId = user.id
                allowed = try await self.store.passkeys(userId: user.id).map(\.credentialId)
            }
            // An email with no passkeys (or no account) gets one stable decoy id, so the answer does not tell who
            // has an account or passkeys. A sign-in with it fails like any unknown credential.
            if allowed.isEmpty {
                let mac = HMAC<SHA256>.authenticationCode(for: Array(email.utf8), using: self.decoyKey)
                allowed = [Base64.urlEncode(Array(mac.prefix(16)))]
            }
        }
        // Nothing is stored: the challenge carries its expiry and, under its MAC, the account it is for.
        let expiresAt = now.addingTimeInterval(self.settings.timeout.timeInterval)
        let challenge = self.challenges.issue(
            for: email == nil ? Self.anyAccount : Self.binding(userId: userId),
            expiresAtMillis: expiresAt.millis,
            nonce: self.secrets.randomBytes(SelfContainedChallenges.nonceLength)
        )
        self.audit.metrics?.started(.passkey)
        return RequestOptionsJSON(
            challenge: challenge,
            timeout: self.timeoutMilliseconds,
            rpId: self.relyingParty.id,
            allowCredentials: allowed.map { .init(id: $0) },
            userVerification: self.relyingParty.userVerification.rawValue,
            hints: self.hintsJSON(hints)
        )
    }

    func verifyAuthentication(_ response: AuthenticationResponseJSON) async throws -> (UserRecord, String, SessionRecord) {
        do {
            return try await self.verifyAuthenticationUnaudited(response)
        } catch {
            // The passkey the response names, if it is one of ours: the event then says whose and which.
            var passkey: PasskeyRecord?
            if let credentialId = Base64.decode(response.rawId, maxDecodedLength: 1024) {
                passkey = try? await self.store.passkey(credentialId: Base64.urlEncode(credentialId))
            }
            await self.audit.recordFailure(.passkeyLogin, error: error, userId: passkey?.userId, passkeyId: passkey?.id)
            throw error
        }
    }

    private func verifyAuthenticationUnaudited(_ response: AuthenticationResponseJSON) async throws
        -> (UserRecord, String, SessionRecord)
    {
        let now = self.now()
        let (credentialId, clientDataJSON, authenticatorData, signature, userHandle) = try Self.invalidRequestOnFailure {
            () throws(WebAuthnError) in try response.decoded()
        }
        // The challenge as the (not yet verified) client data carries it; verification then checks the client data.
        let challengeBytes: [UInt8]
        do {
            challengeBytes = try CollectedClientData(bytes: clientDataJSON).challenge
        } catch {
            throw APIError.invalidPasskeyAssertion(error)
        }
        let challenge = Base64.urlEncode(challengeBytes)
        // Text that no instance of any deployment issues (another ceremony's challenge, garbage): nothing to read.
        guard SelfContainedChallenges.isWellFormed(challenge) else { throw APIError.challengeNotFound }
        let attempt = try await self.store.passkeySignInAttempt(credentialId: Base64.urlEncode(credentialId), challenge: challenge)
        // Issued by this deployment for any account (no email given), or for the passkey's owner (an email given).
        let expiry = self.challenges.expiry(of: challenge, for: Self.anyAccount)
            ?? attempt.flatMap { self.challenges.expiry(of: challenge, for: Self.binding(userId: $0.passkey.userId)) }
        guard let attempt else {
            // An unknown credential. A challenge issued for any account is used up by the attempt; one issued for an
            // account cannot be told from any other text without a passkey of that account, and nothing is written.
            if let expiry {
                guard now.millis < expiry else { throw APIError.challengeExpired }
                guard try await self.store.recordAnsweredWebAuthnChallenge(self.answered(challenge, expiry: expiry, at: now), at: now)
                else {
                    throw APIError.challengeNotFound
                }
            }
            throw APIError.passkeyNotFoundForLogin
        }
        // A challenge gets exactly one attempt, whatever its outcome: a failed attempt records it; a successful one
        // records it in the transaction that stores the session (only one of several concurrent attempts can).
        guard let expiry, !attempt.challengeUsed else { throw APIError.challengeNotFound }
        guard now.millis < expiry else { throw APIError.challengeExpired }
        let answered = self.answered(challenge, expiry: expiry, at: now)
        do {
            let (user, passkey, verified) = try await self.verifyAssertion(
                attempt: attempt,
                credentialId: credentialId,
                clientDataJSON: clientDataJSON,
                authenticatorData: authenticatorData,
                signature: signature,
                userHandle: userHandle,
                challenge: challengeBytes
            )
            // A synced passkey of an account that requires device-bound ones: registered before the policy, or one
            // whose authenticator now reports it backup eligible (a BE change alone never fails a sign-in).
            if user.requireDeviceBoundPasskeys && (passkey.backupEligible || verified.backupEligible) {
                throw APIError.deviceBoundPasskeyRequired
            }
            var (token, session) = self.sessions.make(for: user, method: .passkey)
            // A passkey is a strong proof only with user verification (a PIN or biometric on the authenticator).
            session.strongAuthenticatedAt = self.sessions.strongAuthenticationTime(for: .passkey, at: now, userVerified: verified.userVerified)
            // The OpenID EAP class the sign-in met: a device-bound passkey (never backup eligible) is `phrh`.
            session.acr = (passkey.backupEligible || verified.backupEligible) ? ACR.phr.rawValue : ACR.phrh.rawValue
            var events = [self.audit.event(.passkeyLogin, userId: user.id, passkeyId: passkey.id)]
            if verified.cloneWarning {
                events.append(self.audit.event(.cloneWarning, .info, userId: user.id, passkeyId: passkey.id))
            }
            if verified.backupEligibilityChanged {
                // Recorded with the sign-in (the stored flag is updated in the same write); the reason says which way.
                let reason = verified.backupEligible ? "now_backup_eligible" : "no_longer_backup_eligible"
                events.append(self.audit.event(.passkeyBackupEligibilityChanged, .info, userId: user.id, passkeyId: passkey.id, reason: reason))
            }
            guard try await self.store.completePasskeySignIn(
                challenge: answered,
                passkeyId: passkey.id,
                signCount: Int64(verified.newSignCount),
                backupEligible: verified.backupEligible,
                backedUp: verified.backupState,
                cloneWarning: verified.cloneWarning,
                session: session,
                events: events,
                at: now
            ) else {
                throw APIError.challengeNotFound  // another attempt with the same challenge got there first
            }
            self.audit.committed(events)
            if verified.cloneWarning {
                self.logger.warning(
                    "passkey sign counter did not increase: possible cloned authenticator",
                    metadata: ["passkey": "\(passkey.id)", "user": "\(passkey.userId)"]
                )
            }
            return (user, token, session)
        } catch let error as APIError where error == .challengeNotFound {
            throw error
        } catch {
            guard try await self.store.recordAnsweredWebAuthnChallenge(answered, at: now) else {
                throw APIError.challengeNotFound  // answered by another attempt meanwhile
            }
            throw error
        }
    }

    /// The record of an answered sign-in challenge: kept until its expiry and a margin for instances whose clocks
    /// differ (``BiometricService/answeredChallengeRetention``).
    private func answered(_ challenge: String, expiry: Int64, at now: Date) -> WebAuthnChallengeRecord {
        WebAuthnChallengeRecord(
            challenge: challenge,
            purpose: .authentication,
            userId: nil,
            allowCredentials: [],
            createdAt: now,
            expiresAt: Date(millis: expiry).addingTimeInterval(BiometricService.answeredChallengeRetention)
        )
    }

    /// Verifies the assertion of the passkey read with its owner against the challenge (nothing is written but a wrong
    /// signature's count). Which account may answer is the challenge's binding, checked before.
    private func verifyAssertion(
        attempt: PasskeySignInAttemptRecord,
        credentialId: [UInt8],
        clientDataJSON: [UInt8],
        authenticatorData: [UInt8],
        signature: [UInt8],
        userHandle: [UInt8]?,
        challenge: [UInt8]
    ) async throws -> (UserRecord, PasskeyRecord, VerifiedAuthentication) {
        let passkey = attempt.passkey
        guard passkey.lockedAt == nil else { throw APIError.passkeyLocked }
        let verified: VerifiedAuthentication
        do {
            verified = try await self.checkAssertion(
                by: passkey,
                credentialId: credentialId,
                clientDataJSON: clientDataJSON,
                authenticatorData: authenticatorData,
                signature: signature,
                userHandle: userHandle,
                challenge: challenge,
                allowCredentials: []
            )
        } catch let error as WebAuthnError {
            throw APIError.invalidPasskeyAssertion(error)
        }
        guard let user = attempt.user else { throw APIError.passkeyNotFoundForLogin }
        return (user, passkey, verified)
    }

    /// Verifies an assertion made with the stored `passkey` (WebAuthn §7.2) against `challenge`. A wrong signature
    /// counts toward the passkey's lockout (other failures say nothing about the key); the verifier's
    /// ``WebAuthnError`` is rethrown for the caller to report. Nothing else is written.
    func checkAssertion(
        by passkey: PasskeyRecord,
        credentialId: [UInt8],
        clientDataJSON: [UInt8],
        authenticatorData: [UInt8],
        signature: [UInt8],
        userHandle: [UInt8]?,
        challenge: [UInt8],
        allowCredentials: [[UInt8]]
    ) async throws -> VerifiedAuthentication {
        do {
            let credential = StoredCredential(
                id: credentialId,
                publicKey: passkey.publicKey,
                signCount: UInt32(clamping: passkey.signCount),
                backupEligible: passkey.backupEligible,
                userHandle: Self.userHandle(of: passkey.userId)
            )
            return try withSpan("passkey.verify") { _ in
                try self.relyingParty.verifyAuthentication(
                    credentialId: credentialId,
                    clientDataJSON: clientDataJSON,
                    authenticatorData: authenticatorData,
                    signature: signature,
                    userHandle: userHandle,
                    challenge: challenge,
                    allowCredentials: allowCredentials,
                    credential: credential,
                    keys: self.keys
                )
            }
        } catch let error as WebAuthnError {
            if error.code == .invalidSignature {
                let threshold = Int64(self.policy.current.lockoutThreshold)
                let now = self.now()
                // The event (and its notice) is stored only if this failure is the one that locks.
                let address = try await self.store.user(id: passkey.userId)?.email
                try await self.audit.commit(self.audit.event(.passkeyLocked, .info, userId: passkey.userId, passkeyId: passkey.id, notify: address)) { tx in
                    try await tx.recordFailedPasskeyAssertion(id: passkey.id, threshold: threshold, at: now)
                }
            }
            throw error
        }
    }

    /// Unlocks one of the caller's locked passkeys; needs fresh strong authentication.
    func unlock(caller: AuthenticatedSession, passkeyId: String) async throws -> PasskeyRecord {
        try self.sessions.requireFreshStrongAuthentication(caller, within: self.reauthenticationWindow)
        guard let passkey = try await self.store.passkey(id: passkeyId), passkey.userId == caller.user.id else {
            throw APIError.passkeyNotFound
        }
        guard try await self.store.unlockPasskey(id: passkeyId, userId: caller.user.id) else { throw APIError.passkeyNotLocked }
        try await self.audit.record(.passkeyUnlocked, userId: caller.user.id, passkeyId: passkeyId)
        guard let unlocked = try await self.store.passkey(id: passkeyId) else { throw APIError.passkeyNotFound }
        return unlocked
    }

    // MARK: Helpers

    /// The request's hints, else the configured ones; nil (left out of the options) when there are none.
    func hintsJSON(_ requested: [PasskeyHint]?) -> [String]? {
        let hints = requested.map { $0.map(\.rawValue) } ?? self.settings.hints
        return hints.isEmpty ? nil : hints
    }

    /// Reads the challenge from the (not yet verified) client data and consumes it; verification then checks the
    /// client data against it.
    private func consumeChallenge(in clientDataJSON: [UInt8], purpose: ChallengePurpose, at now: Date) async throws
        -> WebAuthnChallengeRecord
    {
        let clientData: CollectedClientData
        do {
            clientData = try CollectedClientData(bytes: clientDataJSON)
        } catch {
            throw purpose == .registration ? APIError.invalidPasskeyRegistration(error) : APIError.invalidPasskeyAssertion(error)
        }
        guard let record = try await self.store.consumeWebAuthnChallenge(
            Base64.urlEncode(clientData.challenge),
            purpose: purpose,
            at: now
        ) else {
            throw APIError.challengeNotFound
        }
        guard now < record.expiresAt else { throw APIError.challengeExpired }
        return record
    }

    /// Base64url fields that do not decode are a malformed request, not a failed verification.
    static func invalidRequestOnFailure<T>(_ body: () throws(WebAuthnError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw APIError.invalidRequest(error.reason)
        }
    }

    static func decode(_ text: String, field: String) throws -> [UInt8] {
        guard let bytes = Base64.decode(text, maxDecodedLength: 32 * 1024) else {
            throw APIError.invalidRequest("field '\(field)' is not base64url")
        }
        return bytes
    }
}

