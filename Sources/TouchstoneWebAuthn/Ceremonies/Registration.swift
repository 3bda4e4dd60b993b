public import Foundation
import Crypto
public import X509
import SwiftASN1

/// A registration that passed verification: what the relying party stores.
public struct VerifiedRegistration: Sendable {
    /// The attestation statement format (`none`, `packed`...).
    public var format: String
    public var attestationType: AttestationType
    /// Whether the attestation certificate chain reached a configured trust anchor (always `false` for none/self).
    public var attestationTrusted: Bool
    public var credentialId: [UInt8]
    /// The credential public key as the authenticator encoded it (COSE_Key CBOR).
    public var publicKey: [UInt8]
    public var algorithm: COSEAlgorithm
    public var signCount: UInt32
    public var aaguid: [UInt8]
    public var userVerified: Bool
    public var backupEligible: Bool
    public var backupState: Bool
    public var trustPath: [Certificate]
    /// The authenticator model's metadata entry, when ``RelyingParty/metadata`` knows it.
    public var metadata: MetadataEntry?
    /// The attestation certificate's key identifier (``MetadataEntry/keyIdentifier(of:)``), for certificate-based
    /// attestation: how metadata names U2F authenticators.
    public var attestationKeyIdentifier: String?
}

extension RelyingParty {
    /// Verifies a registration response, following WebAuthn Level 3 §7.1 in order.
    ///
    /// https://www.w3.org/TR/webauthn-3/#sctn-registering-a-new-credential
    ///
    /// - Parameters:
    ///   - clientDataJSON: `response.clientDataJSON`, decoded from base64url.
    ///   - attestationObject: `response.attestationObject`, decoded from base64url.
    ///   - challenge: The challenge this relying party issued for the ceremony.
    ///   - time: The time at which attestation certificates must be valid.
    /// - Throws: ``WebAuthnError`` naming the step that failed.
    /// How the browser was asked to create the credential (`CredentialMediationRequirement`).
    public enum Mediation: String, Sendable, Hashable, CaseIterable {
        /// The usual dialog: the user is present (UP) by definition.
        case modal
        /// Conditional create (an automatic passkey upgrade after a password sign-in): the authenticator may create the
        /// credential without a gesture, so UP is not required (§7.1 step 14).
        case conditional
    }

    public func verifyRegistration(
        clientDataJSON: [UInt8],
        attestationObject: [UInt8],
        challenge: [UInt8],
        mediation: Mediation = .modal,
        at time: Date = Date()
    ) async throws(WebAuthnError) -> VerifiedRegistration {
        // Steps 5–6: parse the client data.
        let clientData = try CollectedClientData(bytes: clientDataJSON)
        // Steps 7–10: type, challenge, origin, cross-origin and top origin.
        try self.checkClientData(clientData, type: "webauthn.create", challenge: challenge)
        // Step 11: hash of the client data.
        let clientDataHash = Array(SHA256.hash(data: clientDataJSON))
        // Step 12: decode the attestation object into fmt, authData and attStmt.
        let (format, authData, statement) = try Self.decodeAttestationObject(attestationObject)
        // Steps 13–16: RP ID hash, user presence, user verification, backup flags.
        try self.checkAuthenticatorData(authData, userPresenceRequired: mediation != .conditional)
        guard let credential = authData.attestedCredentialData else {
            throw WebAuthnError.malformed("authenticator data carries no attested credential data")
        }
        // Step 19: the credential's algorithm is one the relying party asked for.
        guard self.algorithms.contains(credential.publicKey.algorithm) else {
            throw WebAuthnError(.algorithmNotAllowed, "algorithm \(credential.publicKey.algorithm.name) is not allowed")
        }
        // Steps 21–22: a known format whose statement verifies.
        guard let verifier = AttestationFormats.all[format] else {
            throw WebAuthnError(.unsupportedFormat, "attestation format '\(format)' is not supported")
        }
        let outcome = try verifier.verify(
            AttestationInput(statement: statement, authData: authData, credential: credential, clientDataHash: clientDataHash)
        )
        // Step 23: certificate-based attestation must chain to a trust anchor to be trusted: the configured anchors and,
        // when metadata describes this authenticator model, the roots it lists for it. When there are anchors, a
        // certificate outside its validity period at `time`, or a chain that reaches none of them, fails the
        // registration (it is not merely reported as untrusted); without anchors nothing can be trusted and the
        // attestation is reported as it is.
        let aaguid = AAGUID.string(credential.aaguid)
        let leaf = outcome.trustPath.first
        let keyIdentifier = leaf.map(MetadataEntry.keyIdentifier(of:))
        let entry = self.metadata?.entry(format: format, aaguid: aaguid, keyIdentifier: keyIdentifier)
        let anchors = self.trustAnchors + (entry?.attestationRoots ?? [])
        var trusted = false
        if !outcome.trustPath.isEmpty && !anchors.isEmpty {
            for certificate in outcome.trustPath where !(certificate.notValidBefore...certificate.notValidAfter).contains(time) {
                throw WebAuthnError(
                    .untrustedAttestation,
                    "the attestation certificate '\(certificate.subject)' is not valid at \(time): valid from "
                        + "\(certificate.notValidBefore) to \(certificate.notValidAfter)"
                )
            }
            guard await Self.chainIsTrusted(outcome.trustPath, anchors: anchors, at: time) else {
                let whose = entry == nil ? "a configured trust anchor" : "a configured trust anchor or a metadata root of its model"
                throw WebAuthnError(.untrustedAttestation, "the attestation certificate does not chain to \(whose)")
            }
            trusted = true
        }
        // The model's status: a known compromise refuses the registration; "certified only" needs a certified model
        // whose attestation was trusted.
        if let entry, let report = entry.activeReport(refusing: self.refusedStatuses, attestationCertificate: leaf) {
            throw WebAuthnError(
                .authenticatorStatusRefused,
                "the authenticator model '\(entry.description ?? aaguid)' has status \(report.status)"
                    + (report.effectiveDate.map { " since \($0)" } ?? "")
            )
        }
        if self.requireCertifiedAuthenticators {
            guard let entry else {
                throw WebAuthnError(.uncertifiedAuthenticator, "the authenticator model \(aaguid) is not in the authenticator metadata")
            }
            guard entry.isCertified else {
                throw WebAuthnError(.uncertifiedAuthenticator, "the authenticator model '\(entry.description ?? aaguid)' is not FIDO certified")
            }
            guard trusted else {
                throw WebAuthnError(.uncertifiedAuthenticator, "the registration carries no attestation that chains to its model's roots")
            }
        }
        // Step 24: the attestation is as strong as the policy demands.
        let established: AttestationType = outcome.trustPath.isEmpty || trusted ? outcome.type : .none
        guard established >= self.minimumAttestation else {
            if !outcome.trustPath.isEmpty && !trusted {
                throw WebAuthnError(.untrustedAttestation, "the attestation certificate does not chain to a trust anchor")
            }
            throw WebAuthnError(
                .attestationTypeNotAllowed,
                "attestation type \(outcome.type.rawValue) is weaker than the required \(self.minimumAttestation.rawValue)"
            )
        }
        // Step 25: credential id length (enforced while parsing the authenticator data).
        return VerifiedRegistration(
            format: format,
            attestationType: outcome.type,
            attestationTrusted: trusted,
            credentialId: credential.credentialId,
            publicKey: credential.publicKeyBytes,
            algorithm: credential.publicKey.algorithm,
            signCount: authData.signCount,
            aaguid: credential.aaguid,
            userVerified: authData.flags.contains(.userVerified),
            backupEligible: authData.flags.contains(.backupEligible),
            backupState: authData.flags.contains(.backupState),
            trustPath: outcome.trustPath,
            metadata: entry,
            attestationKeyIdentifier: keyIdentifier
        )
    }

    static func decodeAttestationObject(_ bytes: [UInt8]) throws(WebAuthnError) -> (String, AuthenticatorData, CBORMap) {
        let item: CBOR
        do {
            item = try CBORDecoder().decode(bytes)
        } catch {
            throw .malformed("attestationObject is not CBOR: \(error.reason)")
        }
        guard let map = item.mapValue, let format = map[text: "fmt"]?.textValue,
            let authDataBytes = map[text: "authData"]?.bytesValue, let statement = map[text: "attStmt"]?.mapValue
        else {
            throw .malformed("attestationObject needs fmt, authData and attStmt")
        }
        return (format, try AuthenticatorData(bytes: authDataBytes), statement)
    }

    static func chainIsTrusted(_ path: [Certificate], anchors: [Certificate], at time: Date) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore(anchors)) {
            RFC5280Policy(validationTime: time)
            AttestationCertificatePolicy()
        }
        let result = await verifier.validate(leafCertificate: path[0], intermediates: CertificateStore(path.dropFirst()))
        if case .validCertificate = result { return true }
        return false
    }
}

/// Declares the critical extensions that attestation formats check themselves, so chain building does not discard an
/// attestation certificate for carrying them (a TPM AIK certificate's subject alternative name must be critical,
/// §8.3.1, and the TPM format verifies its contents).
struct AttestationCertificatePolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.subjectAlternativeName]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        .meetsPolicy
    }
}
