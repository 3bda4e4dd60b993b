import Crypto
import Foundation
import TouchstoneAuth
import TouchstoneConfirmation
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebhooks
import TouchstoneWebAuthn

/// Who is asking about a confirmation: its user (a session) or the app's backend (an admin key).
enum ConfirmationCaller: Sendable {
    case user(AuthenticatedSession)
    case service(name: String)

    /// Whether the caller may read or decide `confirmation`.
    func mayAccess(_ confirmation: ConfirmationRecord) -> Bool {
        switch self {
        case .user(let session): session.user.id == confirmation.userId
        case .service: true
        }
    }
}

/// Transaction confirmations: made for a user, shown and signed on the device, approved once with the device key or a
/// passkey (or declined), with a receipt signed by the server's token keys and evidence kept for later.
struct ConfirmationService: Sendable {
    let store: any TouchstoneStore
    let secrets: Secrets
    let now: @Sendable () -> Date
    let ring: SigningKeyRing
    let audit: AuditLog
    let policy: PolicyProvider
    let relyingParty: RelyingParty
    /// Checks passkey assertions (and counts wrong signatures toward the passkey's lockout) as sign-in does.
    let passkeys: PasskeyService
    let issuer: String
    let receiptAudiences: [String]

    static let defaultLifetime = 300
    static let lifetimes = 10...3600

    // MARK: Creating and reading

    /// Makes a pending confirmation and its payload.
    func create(summary: String, details: [String: TouchstoneConfirmation.JSONValue], userId: String, lifetime: Int, createdBy: String) async throws
        -> ConfirmationRecord
    {
        let now = self.now()
        // Whole seconds, so the RFC 3339 time in the payload is the stored expiry exactly.
        let expiresAt = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + Double(lifetime)).rounded(.down))
        let id = self.secrets.newIdentifier()
        let payload = ConfirmationPayload(
            confirmationId: id,
            challenge: self.secrets.newChallenge(),
            rpId: self.relyingParty.id,
            userId: userId,
            summary: summary,
            details: details,
            expiresAt: expiresAt.rfc3339Seconds
        )
        let record = ConfirmationRecord(
            id: id,
            userId: userId,
            summary: summary,
            details: CanonicalJSON.string(.object(details)),
            payload: payload.text,
            createdBy: createdBy,
            createdAt: now,
            expiresAt: expiresAt
        )
        try await self.store.insertConfirmation(record)
        self.audit.metrics?.started(.confirmation)
        return record
    }

    /// The confirmation, for its own user or a service caller; anyone else is told it does not exist.
    func find(_ id: String, for caller: ConfirmationCaller) async throws -> ConfirmationRecord {
        guard let confirmation = try await self.store.confirmation(id: id), caller.mayAccess(confirmation) else {
            throw APIError.confirmationNotFound
        }
        return confirmation
    }

    /// 409 when decided, 410 when expired.
    func requirePending(_ confirmation: ConfirmationRecord) throws {
        guard confirmation.status == .pending else { throw APIError.confirmationNotPending }
        guard self.now() < confirmation.expiresAt else { throw APIError.confirmationExpired }
    }

    // MARK: Deciding

    /// Declines a pending confirmation.
    func decline(_ id: String, caller: ConfirmationCaller) async throws -> ConfirmationRecord {
        let confirmation = try await self.find(id, for: caller)
        try self.requirePending(confirmation)
        let event = self.event(.confirmationDeclined, confirmation, reason: nil)
        guard try await self.store.decideConfirmation(id: id, approval: nil, events: [event], at: self.now()) else {
            throw try await self.whyNotPending(id)
        }
        self.audit.committed([event])
        return try await self.reload(id)
    }

    /// Approves with a registration's device key: the signature over the payload's UTF-8 bytes is the proof.
    func approveWithDeviceKey(_ id: String, registrationId: String, signature: [UInt8], session: AuthenticatedSession?) async throws
        -> (ConfirmationRecord, String)
    {
        guard let confirmation = try await self.store.confirmation(id: id) else { throw APIError.confirmationNotFound }
        if let session, session.user.id != confirmation.userId { throw APIError.confirmationNotFound }
        try self.requirePending(confirmation)
        guard let registration = try await self.store.registration(id: registrationId), registration.status != .pending else {
            throw APIError.registrationNotFound
        }
        guard registration.userId == confirmation.userId else {
            await self.recordFailure(confirmation, reason: "registration_not_allowed", registrationId: registrationId)
            throw APIError.registrationNotAllowed
        }
        guard registration.status != .locked else {
            await self.recordFailure(confirmation, reason: "registration_locked", registrationId: registrationId)
            throw APIError.registrationLocked
        }
        guard registration.status == .active else {
            await self.recordFailure(confirmation, reason: "registration_revoked", registrationId: registrationId)
            throw APIError.registrationRevoked
        }
        guard let algorithm = SignatureAlgorithm(rawValue: registration.algorithm),
            let key = try? DevicePublicKey(bytes: registration.publicKey, algorithm: algorithm)
        else {
            // A stored key always parsed when it was stored; failing now means the row was damaged.
            throw APIError.internalError
        }
        guard key.isValidSignature(signature, for: Array(confirmation.payload.utf8)) else {
            // The confirmation stays pending; the failure counts toward the registration's lockout.
            try await self.audit.recordLockout(registration: registration, threshold: Int64(self.policy.current.lockoutThreshold), at: self.now())
            await self.recordFailure(confirmation, reason: "invalid_signature", registrationId: registrationId)
            throw APIError.invalidSignature
        }
        let approval = ConfirmationRecord.Approval(
            method: "biometric",
            registrationId: registration.id,
            algorithm: registration.algorithm,
            publicKey: Base64.urlEncode(key.spkiDERRepresentation),
            signature: Base64.urlEncode(signature)
        )
        return try await self.approve(confirmation, approval: approval)
    }

    /// WebAuthn request options for approving with a passkey: the challenge is the SHA-256 of the payload, the allowed
    /// credentials the user's passkeys.
    func passkeyOptions(_ id: String, session: AuthenticatedSession, timeout: Int) async throws -> RequestOptionsJSON {
        let confirmation = try await self.find(id, for: .user(session))
        try self.requirePending(confirmation)
        let passkeys = try await self.store.passkeys(userId: confirmation.userId)
        guard !passkeys.isEmpty else { throw APIError.noPasskeys }
        return RequestOptionsJSON(
            challenge: Base64.urlEncode(Array(SHA256.hash(data: Array(confirmation.payload.utf8)))),
            timeout: timeout,
            rpId: self.relyingParty.id,
            allowCredentials: passkeys.map { .init(id: $0.credentialId) },
            userVerification: self.relyingParty.userVerification.rawValue
        )
    }

    /// Approves with a passkey assertion over the SHA-256 of the payload: the assertion is the proof.
    func approveWithPasskey(_ id: String, response: AuthenticationResponseJSON) async throws -> (ConfirmationRecord, String) {
        guard let confirmation = try await self.store.confirmation(id: id) else { throw APIError.confirmationNotFound }
        try self.requirePending(confirmation)
        let decoded: (credentialId: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?)
        do {
            decoded = try response.decoded()
        } catch {
            throw APIError.invalidRequest("\(error)")
        }
        guard let passkey = try await self.store.passkey(credentialId: Base64.urlEncode(decoded.credentialId)) else {
            throw APIError.passkeyNotFoundForLogin
        }
        guard passkey.userId == confirmation.userId else {
            await self.recordFailure(confirmation, reason: "registration_not_allowed", passkeyId: passkey.id)
            throw APIError.registrationNotAllowed
        }
        guard passkey.lockedAt == nil else {
            await self.recordFailure(confirmation, reason: "passkey_locked", passkeyId: passkey.id)
            throw APIError.passkeyLocked
        }
        let verified: VerifiedAuthentication
        do {
            verified = try await self.passkeys.checkAssertion(
                by: passkey,
                credentialId: decoded.credentialId,
                clientDataJSON: decoded.clientDataJSON,
                authenticatorData: decoded.authenticatorData,
                signature: decoded.signature,
                userHandle: decoded.userHandle,
                challenge: Array(SHA256.hash(data: Array(confirmation.payload.utf8))),
                allowCredentials: []
            )
        } catch let error as WebAuthnError where error.code == .invalidSignature {
            await self.recordFailure(confirmation, reason: "invalid_signature", passkeyId: passkey.id)
            throw APIError.invalidSignature
        } catch let error as WebAuthnError {
            await self.recordFailure(confirmation, reason: "invalid_passkey_assertion", passkeyId: passkey.id)
            throw APIError.invalidPasskeyAssertion(error)
        }
        let approval = ConfirmationRecord.Approval(
            method: "passkey",
            passkeyId: passkey.id,
            algorithm: (try? COSEKey(bytes: passkey.publicKey))?.algorithm.name ?? "unknown",
            publicKey: Base64.urlEncode(passkey.publicKey),
            signature: Base64.urlEncode(decoded.signature),
            authenticatorData: Base64.urlEncode(decoded.authenticatorData),
            clientDataJSON: Base64.urlEncode(decoded.clientDataJSON)
        )
        // One transaction (issue #44 item 2), as a device key's approval is: the approval, the passkey's use (counter,
        // backup flags, last use) and a backup-eligibility change's event commit together or not at all.
        var events: [AuditEventRecord] = []
        if verified.backupEligibilityChanged {
            // As at sign-in: the new flag is stored and the change recorded, never refused.
            let reason = verified.backupEligible ? "now_backup_eligible" : "no_longer_backup_eligible"
            events.append(self.audit.event(.passkeyBackupEligibilityChanged, .info, userId: passkey.userId, passkeyId: passkey.id, reason: reason))
        }
        let now = self.now()
        return try await self.approve(confirmation, approval: approval, events: events, at: now) { tx in
            try await tx.recordUse(of: passkey.id, verified, at: now)
        }
    }

    /// Stores the approval (exactly one of concurrent approvals wins) and signs the receipt. `events` and `alongside`
    /// (the credential's own record of its use) go into the approval's transaction, and happen only when it wins.
    private func approve(
        _ confirmation: ConfirmationRecord,
        approval: ConfirmationRecord.Approval,
        events extra: [AuditEventRecord] = [],
        at now: Date? = nil,
        alongside: (@Sendable (any TouchstoneStore) async throws -> Void)? = nil
    ) async throws -> (ConfirmationRecord, String) {
        let now = now ?? self.now()
        let event = self.event(.confirmationApproved, confirmation, reason: approval.method, registrationId: approval.registrationId, passkeyId: approval.passkeyId)
        let events = [event] + extra
        let decided = try await self.store.unitOfWork { tx in
            guard try await tx.decideConfirmation(id: confirmation.id, approval: approval, events: events, at: now) else { return false }
            try await alongside?(tx)
            return true
        }
        guard decided else { throw try await self.whyNotPending(confirmation.id) }
        self.audit.committed(events)
        let claims = ConfirmationReceiptClaims(
            issuer: self.issuer,
            subject: confirmation.userId,
            audience: self.receiptAudiences,
            issuedAt: Int64(now.timeIntervalSince1970.rounded(.down)),
            tokenId: Base64.urlEncode(self.secrets.randomBytes(16)),
            confirmationId: confirmation.id,
            payloadSHA256: ConfirmationEvidence.sha256(confirmation.payload),
            method: approval.method,
            methods: ["hwk", "user"]
        )
        let (receipt, _) = try await self.ring.sign(claims, type: confirmationReceiptType)
        return (try await self.reload(confirmation.id), receipt)
    }

    /// The evidence of an approved confirmation.
    func evidence(_ id: String, caller: ConfirmationCaller) async throws -> ConfirmationEvidence {
        let confirmation = try await self.find(id, for: caller)
        guard confirmation.status == .approved, let evidence = ConfirmationEvidence(approved: confirmation) else {
            throw APIError.confirmationNotPending
        }
        return evidence
    }

    // MARK: Helpers

    private func reload(_ id: String) async throws -> ConfirmationRecord {
        guard let confirmation = try await self.store.confirmation(id: id) else { throw APIError.confirmationNotFound }
        return confirmation
    }

    /// After a decision lost a race or the confirmation expired meanwhile: which of the two.
    private func whyNotPending(_ id: String) async throws -> APIError {
        let confirmation = try await self.reload(id)
        return confirmation.status == .pending ? .confirmationExpired : .confirmationNotPending
    }

    /// An audit event with the payload's hash, never the details.
    private func event(
        _ type: AuditEventType,
        _ confirmation: ConfirmationRecord,
        reason: String?,
        registrationId: String? = nil,
        passkeyId: String? = nil
    ) -> AuditEventRecord {
        let hash = "confirmation \(confirmation.id) payload_sha256 \(ConfirmationEvidence.sha256(confirmation.payload))"
        return self.audit.event(
            type,
            type == .confirmationFailed ? .failure : .success,
            userId: confirmation.userId,
            registrationId: registrationId,
            passkeyId: passkeyId,
            reason: reason.map { "\($0); \(hash)" } ?? hash,
            webhookData: ["confirmationId": .string(confirmation.id)]
        )
    }

    private func recordFailure(_ confirmation: ConfirmationRecord, reason: String, registrationId: String? = nil, passkeyId: String? = nil) async {
        let event = self.event(.confirmationFailed, confirmation, reason: reason, registrationId: registrationId, passkeyId: passkeyId)
        if (try? await self.store.insertAuditEvent(event)) != nil { self.audit.committed([event]) }
    }
}

extension ConfirmationEvidence {
    /// The evidence of an approved confirmation (nil until it is approved): the payload, the key and its signature.
    init?(approved confirmation: ConfirmationRecord) {
        guard let approval = confirmation.approval, let decidedAt = confirmation.decidedAt else { return nil }
        self.init(
            confirmationId: confirmation.id,
            payload: confirmation.payload,
            method: approval.method,
            algorithm: approval.algorithm,
            publicKey: approval.publicKey,
            signature: approval.signature,
            authenticatorData: approval.authenticatorData,
            clientDataJSON: approval.clientDataJSON,
            registrationId: approval.registrationId,
            passkeyId: approval.passkeyId,
            approvedAt: decidedAt.rfc3339
        )
    }
}
