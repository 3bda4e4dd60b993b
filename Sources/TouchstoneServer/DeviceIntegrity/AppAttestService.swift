import Crypto
import Foundation
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebAuthn

/// App Attest: one-time challenges, attested keys, and the assertion that vouches for a biometric enrolment.
///
/// - The app asks for a challenge, calls `DCAppAttestService.attestKey(keyId, clientDataHash: SHA256(UTF-8 of the
///   challenge))` and posts the attestation: the server verifies it with Apple's root and keeps the key.
/// - To enrol a biometric key it asks for another challenge and calls `generateAssertion(keyId, clientDataHash:
///   SHA256(UTF-8 of "<challenge>.<publicKey>"))`, where `publicKey` is exactly the string sent in
///   `registrations/start`: the assertion is bound to that one key and that one request.
struct AppAttestService: Sendable {
    let store: any TouchstoneStore
    let secrets: Secrets
    let now: @Sendable () -> Date
    let settings: AppAttestSettings
    let challengeTTL: TimeInterval

    private var verifier: AppAttestVerifier {
        AppAttestVerifier(appIds: self.settings.appIds, environment: self.settings.environment, trustAnchors: self.settings.trustAnchors)
    }

    private func requireEnabled() throws {
        guard !self.settings.appIds.isEmpty else { throw APIError.appAttestDisabled }
    }

    func issueChallenge() async throws -> (challenge: String, expiresAt: Date) {
        try self.requireEnabled()
        return try await self.store.issueOneTimeChallenge(
            .appAttest, userId: nil, secrets: self.secrets, now: self.now(), lifetime: self.challengeTTL)
    }

    /// Verifies an attestation and stores its key.
    func registerKey(keyId encodedKeyId: String, attestation encodedAttestation: String, challenge: String) async throws
        -> AppAttestKeyRecord
    {
        try self.requireEnabled()
        let now = self.now()
        try await self.consume(challenge, at: now)
        let keyId = try decodeBase64Field(encodedKeyId, field: "keyId", maxLength: 64)
        let attestation = try decodeBase64Field(encodedAttestation, field: "attestation", maxLength: 32 * 1024)
        let attested: AppAttestVerifier.AttestedKey
        do {
            attested = try await self.verifier.verifyAttestation(
                attestation,
                keyId: keyId,
                clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))),
                at: now
            )
        } catch {
            throw APIError.invalidAppAttest(error.description)
        }
        let record = AppAttestKeyRecord(
            keyId: Base64.urlEncode(keyId),
            publicKey: attested.publicKey,
            appId: attested.appId,
            environment: attested.environment.rawValue,
            counter: 0,
            receipt: attested.receipt,
            createdAt: now
        )
        do {
            try await self.store.insertAppAttestKey(record)
        } catch let error as StoreError where error == .conflict("") {
            throw APIError.appAttestKeyExists
        }
        return record
    }

    /// Verifies the assertion that vouches for enrolling `publicKey`; returns the key id to record on the registration.
    func verifyEnrolment(keyId encodedKeyId: String, challenge: String, assertion encodedAssertion: String, publicKey: String)
        async throws -> String
    {
        try self.requireEnabled()
        let now = self.now()
        try await self.consume(challenge, at: now)
        let keyId = Base64.urlEncode(try decodeBase64Field(encodedKeyId, field: "appAttest.keyId", maxLength: 64))
        let assertion = try decodeBase64Field(encodedAssertion, field: "appAttest.assertion", maxLength: 8 * 1024)
        guard let key = try await self.store.appAttestKey(keyId: keyId) else {
            throw APIError.invalidAppAttest("no attested key with this key id; attest the key first")
        }
        let counter: UInt32
        do {
            counter = try self.verifier.verifyAssertion(
                assertion,
                clientData: Array("\(challenge).\(publicKey)".utf8),
                publicKey: key.publicKey,
                appId: key.appId,
                previousCounter: UInt32(clamping: key.counter)
            )
        } catch {
            throw APIError.invalidAppAttest(error.description)
        }
        guard try await self.store.advanceAppAttestCounter(keyId: keyId, from: key.counter, to: Int64(counter), at: now) else {
            throw APIError.invalidAppAttest("counter_not_increased: another assertion of this key was accepted meanwhile")
        }
        return keyId
    }

    private func consume(_ challenge: String, at now: Date) async throws {
        guard let record = try await self.store.consumeWebAuthnChallenge(challenge, purpose: .appAttest, at: now) else {
            throw APIError.challengeNotFound
        }
        guard now < record.expiresAt else { throw APIError.challengeExpired }
    }
}

extension TouchstoneStore {
    /// Stores a new single-use challenge for `purpose` (bound to `userId` when given), valid for `lifetime`.
    func issueOneTimeChallenge(
        _ purpose: ChallengePurpose,
        userId: String?,
        secrets: Secrets,
        now: Date,
        lifetime: TimeInterval
    ) async throws -> (challenge: String, expiresAt: Date) {
        let challenge = secrets.newChallenge()
        let expiresAt = now.addingTimeInterval(lifetime)
        try await self.insertWebAuthnChallenge(
            WebAuthnChallengeRecord(
                challenge: challenge,
                purpose: purpose,
                userId: userId,
                allowCredentials: [],
                createdAt: now,
                expiresAt: expiresAt
            )
        )
        return (challenge, expiresAt)
    }
}
