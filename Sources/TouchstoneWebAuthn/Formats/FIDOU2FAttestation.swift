import Crypto
import X509

/// `fido-u2f` (WebAuthn Level 3 §8.6): a U2F authenticator's attestation certificate signs a U2F registration message.
///
/// https://www.w3.org/TR/webauthn-3/#sctn-fido-u2f-attestation
enum FIDOU2FAttestation: AttestationFormatVerifier {
    static let identifier = "fido-u2f"

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationOutcome {
        let certificates = try input.certificates()
        // Step 2: exactly one certificate, with an EC P-256 key.
        guard certificates.count == 1, let attestationKey = P256.Signing.PublicKey(certificates[0].publicKey) else {
            throw WebAuthnError(.invalidAttestation, "fido-u2f needs one certificate with a P-256 key")
        }
        // Step 4: the credential key is EC2 P-256; the U2F form is 0x04 ‖ x ‖ y.
        guard input.credential.publicKey.algorithm == .es256, let map = input.credential.publicKey.cbor.mapValue,
            let x = map[int: -2]?.bytesValue, let y = map[int: -3]?.bytesValue
        else {
            throw WebAuthnError(.invalidAttestation, "fido-u2f credentials are ES256")
        }
        // Step 5: verificationData = 0x00 ‖ rpIdHash ‖ clientDataHash ‖ credentialId ‖ publicKeyU2F.
        let verificationData: [UInt8] =
            [0x00] + input.authData.rpIdHash + input.clientDataHash + input.credential.credentialId + [0x04] + x + y
        // Step 6: verify sig with the certificate key.
        let verifier = SignatureVerifier(key: .p256(attestationKey), algorithm: .es256)
        guard verifier.isValidSignature(try input.signature(), for: verificationData) else {
            throw WebAuthnError(.invalidSignature, "fido-u2f attestation signature does not verify")
        }
        return AttestationOutcome(type: .basic, trustPath: certificates)
    }
}
