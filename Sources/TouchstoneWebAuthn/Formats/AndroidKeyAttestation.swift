import Crypto
import SwiftASN1
import X509
import _CryptoExtras

/// `android-key` (WebAuthn Level 3 §8.4): Android's hardware-backed keystore attests the credential key.
///
/// https://www.w3.org/TR/webauthn-3/#sctn-android-key-attestation
enum AndroidKeyAttestation: AttestationFormatVerifier {
    static let identifier = "android-key"

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationOutcome {
        let algorithm = try input.algorithm()
        let certificates = try input.certificates()
        let leaf = certificates[0]
        // Step 2: sig over authenticatorData ‖ clientDataHash with the leaf certificate's key.
        guard let verifier = SignatureVerifier(certificateKey: leaf.publicKey, algorithm: algorithm),
            verifier.isValidSignature(try input.signature(), for: input.signedData)
        else {
            throw WebAuthnError(.invalidSignature, "android-key attestation signature does not verify")
        }
        // Step 3: the certificate's key is the credential key.
        guard Self.sameKey(leaf.publicKey, input.credential.publicKey) else {
            throw WebAuthnError(.invalidAttestation, "the credential key is not the attestation certificate's key")
        }
        // Step 4: the KeyDescription extension binds the client data and describes a generated signing key.
        guard let extensionValue = leaf.extensions[oid: KeyDescription.oid] else {
            throw WebAuthnError(.invalidAttestation, "the Android key description extension is missing")
        }
        let description: KeyDescription
        do {
            description = try KeyDescription(der: extensionValue.value)
        } catch {
            throw WebAuthnError(.invalidAttestation, "the Android key description is malformed")
        }
        guard description.attestationChallenge == input.clientDataHash else {
            throw WebAuthnError(.invalidAttestation, "attestationChallenge is not the client data hash")
        }
        guard !description.softwareEnforced.allApplications, !description.teeEnforced.allApplications else {
            throw WebAuthnError(.invalidAttestation, "the key is usable by all applications")
        }
        // Software-enforced values count too (an RP wanting TEE-only keys sets a trust policy on the chain).
        let origins = [description.teeEnforced.origin, description.softwareEnforced.origin].compactMap { $0 }
        let purposes = description.teeEnforced.purposes + description.softwareEnforced.purposes
        guard origins.contains(KeyDescription.originGenerated), purposes.contains(KeyDescription.purposeSign) else {
            throw WebAuthnError(.invalidAttestation, "the key was not generated in the keystore for signing")
        }
        return AttestationOutcome(type: .basic, trustPath: certificates)
    }

    static func sameKey(_ certificateKey: Certificate.PublicKey, _ credential: COSEKey) -> Bool {
        guard let map = credential.cbor.mapValue else { return false }
        switch credential.algorithm {
        case .es256:
            guard let key = P256.Signing.PublicKey(certificateKey), let x = map[int: -2]?.bytesValue, let y = map[int: -3]?.bytesValue
            else { return false }
            return Array(key.x963Representation) == [0x04] + x + y
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .rs1:
            guard let key = _RSA.Signing.PublicKey(certificateKey), let primitives = try? key.getKeyPrimitives(),
                let n = map[int: -1]?.bytesValue, let e = map[int: -2]?.bytesValue
            else { return false }
            func trimmed(_ bytes: [UInt8]) -> [UInt8] { Array(bytes.drop(while: { $0 == 0 })) }
            return trimmed(Array(primitives.modulus)) == trimmed(n) && trimmed(Array(primitives.publicExponent)) == trimmed(e)
        default:
            return false
        }
    }
}
