import SwiftASN1
import X509

/// `packed` (WebAuthn Level 3 §8.2): self attestation, or an attestation certificate (`x5c`).
///
/// https://www.w3.org/TR/webauthn-3/#sctn-packed-attestation
enum PackedAttestation: AttestationFormatVerifier {
    static let identifier = "packed"

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationOutcome {
        let algorithm = try input.algorithm()
        let signature = try input.signature()
        if input.statement[text: "x5c"] != nil {
            // Step: verify sig over authenticatorData ‖ clientDataHash with the attestation certificate's key.
            let certificates = try input.certificates()
            let leaf = certificates[0]
            guard let verifier = SignatureVerifier(certificateKey: leaf.publicKey, algorithm: algorithm) else {
                throw WebAuthnError(.invalidAttestation, "attestation certificate key does not match alg \(algorithm.name)")
            }
            guard verifier.isValidSignature(signature, for: input.signedData) else {
                throw WebAuthnError(.invalidSignature, "packed attestation signature does not verify")
            }
            // Step: the certificate meets §8.2.1's requirements.
            try self.checkCertificateRequirements(leaf)
            // Step: an id-fido-gen-ce-aaguid extension, if present, names this authenticator and is not critical.
            if let extensionValue = leaf.extensions[oid: AttestationOID.fidoAAGUID] {
                guard !extensionValue.critical else {
                    throw WebAuthnError(.invalidAttestation, "the AAGUID extension must not be critical")
                }
                guard let inner = try? ASN1OctetString(derEncoded: extensionValue.value),
                    Array(inner.bytes) == input.credential.aaguid
                else {
                    throw WebAuthnError(.invalidAttestation, "the certificate's AAGUID differs from the authenticator data's")
                }
            }
            return AttestationOutcome(type: .basic, trustPath: certificates)
        }
        // Self attestation: alg matches the credential key and the credential key signed.
        guard algorithm == input.credential.publicKey.algorithm else {
            throw WebAuthnError(.invalidAttestation, "self attestation alg differs from the credential's")
        }
        guard input.credential.publicKey.isValidSignature(signature, for: input.signedData) else {
            throw WebAuthnError(.invalidSignature, "self attestation signature does not verify")
        }
        return AttestationOutcome(type: .self, trustPath: [])
    }

    /// §8.2.1: version 3, subject OU "Authenticator Attestation", not a CA.
    static func checkCertificateRequirements(_ certificate: Certificate) throws(WebAuthnError) {
        guard certificate.version == .v3 else {
            throw WebAuthnError(.invalidAttestation, "attestation certificate must be X.509 v3")
        }
        let units = certificate.subject.flatMap { $0 }.filter { $0.type == AttestationOID.organizationalUnit }
            .map { String(describing: $0.value) }
        guard units.contains("Authenticator Attestation") else {
            throw WebAuthnError(.invalidAttestation, "attestation certificate subject OU must be 'Authenticator Attestation'")
        }
        if case .isCertificateAuthority = (try? certificate.extensions.basicConstraints) ?? .notCertificateAuthority {
            throw WebAuthnError(.invalidAttestation, "attestation certificate must not be a CA")
        }
    }
}
