import Foundation
import TouchstoneCrypto
import TouchstoneStore

/// The phone's DPoP proof key (issue #43): registered with the device key at enrolment or a device-key sign-up, or
/// later through a signed call; the sessions of the registration's sign-ins are bound to it.
extension BiometricService {
    /// Stores the proof key's thumbprint on the registration within `tx`.
    ///
    /// - Throws: 409 `proof_key_in_use` (another registration has it), `proof_key_exists` (this one has one already).
    static func setProofKey(_ proofKey: ProofKeyInput, registrationId: String, userId: String, in tx: some RegistrationStore) async throws {
        let set: Bool
        do {
            set = try await tx.setRegistrationProofKey(id: registrationId, userId: userId, thumbprint: proofKey.thumbprint)
        } catch let error as StoreError where error == .conflict {
            throw APIError.proofKeyInUse
        }
        guard set else { throw APIError.proofKeyExists }
    }

    /// `POST /v1/biometrics/registrations/{id}/proof-key`: a registration enrolled without a proof key gets one. The
    /// challenge is a sign-in challenge of the registration (`POST /v1/biometrics/authentications/start`), used once;
    /// the device key (after the biometric prompt) and the proof key both sign `<challenge>.<thumbprint>`.
    ///
    /// - Throws: 404 `registration_not_found` (not the caller's, or pending); 423 `registration_locked`; 401
    ///   `registration_revoked`, `challenge_not_found` (unknown, another registration's, used), `challenge_expired`,
    ///   `invalid_signature`; 400 `invalid_proof_key`; 409 `proof_key_in_use`, `proof_key_exists`.
    func addProofKey(caller: AuthenticatedSession, registrationId: String, challenge: String, signature: [UInt8], proofKey: ProofKeyInput)
        async throws -> RegistrationRecord
    {
        let now = self.now()
        guard let registration = try await self.store.registration(id: registrationId), registration.userId == caller.user.id,
            registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        guard registration.status != .locked else { throw APIError.registrationLocked }
        guard registration.status == .active else { throw APIError.registrationRevoked }
        guard registration.proofKeyThumbprint == nil else { throw APIError.proofKeyExists }
        guard let expiry = self.challenges.expiry(of: challenge, for: registrationId) else { throw APIError.challengeNotFound }
        guard now.millis < expiry else { throw APIError.challengeExpired }
        guard try self.verify(signature, over: ProofKeyInput.message(challenge: challenge, proofKey: proofKey), by: registration) else {
            throw APIError.invalidSignature
        }
        try proofKey.verify(challenge: challenge)
        if registration.keyAttestation != nil { try proofKey.requireAttested(challenge: challenge) }
        // The challenge is answered now: never usable again, for this or a sign-in.
        let answered = ChallengeRecord(
            challenge: challenge, registrationId: registrationId, purpose: .authentication, createdAt: now,
            expiresAt: Date(millis: expiry).addingTimeInterval(Self.answeredChallengeRetention))
        guard try await self.store.recordAnsweredChallenge(answered, at: now) else { throw APIError.challengeNotFound }
        let event = self.audit.event(.proofKeyAdded, userId: caller.user.id, registrationId: registrationId)
        let (store, userId) = (self.audit.store, caller.user.id)
        try await store.unitOfWork { tx in
            try await Self.setProofKey(proofKey, registrationId: registrationId, userId: userId, in: tx)
            try await tx.insertAuditEvent(event)
        }
        self.audit.committed([event])
        guard let updated = try await self.store.registration(id: registrationId) else { throw APIError.registrationNotFound }
        return updated
    }
}
