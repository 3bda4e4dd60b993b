import Foundation
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebAuthn

// What every new passkey goes through, whoever asks for it: the account's own registration, a passkey sign-up, a reset
// completed with a passkey.
extension PasskeyService {
    /// Creation options for a new passkey of `userId` (the account's own registration, a passkey sign-up, a reset
    /// completed with a passkey): the relying party, the user handle, the algorithms, a resident key, the attestation.
    func creationOptions(
        userId: String,
        email: String,
        displayName: String?,
        challenge: String,
        excluding credentialIds: [String],
        userVerification: UserVerificationRequirement,
        hints: [PasskeyHint]?
    ) -> CreationOptionsJSON {
        CreationOptionsJSON(
            rp: .init(id: self.relyingParty.id, name: self.relyingParty.name),
            user: .init(id: Base64.urlEncode(Self.userHandle(of: userId)), name: email, displayName: displayName ?? email),
            challenge: challenge,
            pubKeyCredParams: self.relyingParty.algorithms.map { .init(alg: $0.rawValue) },
            timeout: self.timeoutMilliseconds,
            excludeCredentials: credentialIds.map { .init(id: $0) },
            authenticatorSelection: .init(userVerification: userVerification.rawValue),
            attestation: self.settings.attestation,
            hints: self.hintsJSON(hints)
        )
    }

    /// A registration response's bytes and the challenge its (not yet verified) client data names: 400
    /// `invalid_request` for fields that are not base64url, `invalid_passkey_registration` for client data that is
    /// not JSON of the right shape.
    static func registrationParts(_ response: RegistrationResponseJSON) throws
        -> (credentialId: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: String)
    {
        let decoded = try Self.invalidRequestOnFailure { () throws(WebAuthnError) in try response.decoded() }
        do {
            let challenge = Base64.urlEncode(try CollectedClientData(bytes: decoded.clientDataJSON).challenge)
            return (decoded.credentialId, decoded.clientDataJSON, decoded.attestationObject, challenge)
        } catch {
            throw APIError.invalidPasskeyRegistration(error)
        }
    }

    /// Every WebAuthn check of a registration (attestation policy, metadata, origins; user verification when
    /// `requireUserVerification`) against `challenge`, and the passkey record it gives `userId` (not stored).
    func verifyNewCredential(
        rawId: [UInt8],
        clientDataJSON: [UInt8],
        attestationObject: [UInt8],
        challenge: String,
        userId: String,
        name: String?,
        mediation: RelyingParty.Mediation,
        requireUserVerification: Bool = false,
        at now: Date
    ) async throws -> (PasskeyRecord, VerifiedRegistration) {
        // The metadata BLOB in use now (never waited for: a refresh runs in the background).
        var relyingParty = self.relyingParty
        relyingParty.metadata = self.metadata?.current
        if requireUserVerification { relyingParty.userVerification = .required }
        if relyingParty.requireCertifiedAuthenticators && relyingParty.metadata == nil { throw APIError.authenticatorMetadataUnavailable }
        let verified: VerifiedRegistration
        do {
            verified = try await relyingParty.verifyRegistration(
                clientDataJSON: clientDataJSON,
                attestationObject: attestationObject,
                challenge: try Self.decode(challenge, field: "challenge"),
                mediation: mediation,
                at: now
            )
        } catch let error as WebAuthnError where error.code == .authenticatorStatusRefused || error.code == .uncertifiedAuthenticator {
            throw APIError.authenticatorNotAllowed(error)
        } catch {
            throw APIError.invalidPasskeyRegistration(error)
        }
        guard rawId == verified.credentialId else {
            throw APIError.invalidPasskeyRegistration(WebAuthnError(.malformed, "rawId is not the attested credential id"))
        }
        var record = PasskeyRecord(
            id: self.secrets.newIdentifier(),
            credentialId: Base64.urlEncode(verified.credentialId),
            userId: userId,
            name: name,
            publicKey: verified.publicKey,
            algorithm: verified.algorithm.rawValue,
            signCount: Int64(verified.signCount),
            aaguid: verified.aaguidString,
            backupEligible: verified.backupEligible,
            backedUp: verified.backupState,
            attestationFormat: verified.format,
            attestationType: verified.attestationType.rawValue,
            createdAt: now
        )
        record.createdVia = mediation.rawValue
        record.attestationKeyId = verified.attestationKeyIdentifier
        return (record, verified)
    }
}
