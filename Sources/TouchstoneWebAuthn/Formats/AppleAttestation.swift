import Crypto
import TouchstoneCrypto
import SwiftASN1
import X509

/// `apple` anonymous attestation (WebAuthn Level 3 §8.8).
///
/// https://www.w3.org/TR/webauthn-3/#sctn-apple-anonymous-attestation
enum AppleAttestation: AttestationFormatVerifier {
    static let identifier = "apple"

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationOutcome {
        let certificates = try input.certificates()
        let leaf = certificates[0]
        // Steps 2–3: nonce = SHA-256(authenticatorData ‖ clientDataHash).
        let nonce = Array(SHA256.hash(data: input.signedData))
        // Step 4: the nonce is in extension 1.2.840.113635.100.8.2: SEQUENCE { [1] EXPLICIT OCTET STRING }.
        guard let extensionValue = leaf.extensions[oid: AttestationOID.appleNonce],
            let certificateNonce = try? Self.nonce(from: extensionValue.value)
        else {
            throw WebAuthnError(.invalidAttestation, "the Apple nonce extension is missing or malformed")
        }
        guard ConstantTime.equal(certificateNonce, nonce) else {
            throw WebAuthnError(.invalidAttestation, "the Apple nonce does not match")
        }
        // Step 5: the credential public key is the certificate's.
        guard let certificateKey = P256.Signing.PublicKey(leaf.publicKey), input.credential.publicKey.algorithm == .es256,
            let map = input.credential.publicKey.cbor.mapValue, let x = map[int: -2]?.bytesValue,
            let y = map[int: -3]?.bytesValue, Array(certificateKey.x963Representation) == [0x04] + x + y
        else {
            throw WebAuthnError(.invalidAttestation, "the credential key is not the certificate's key")
        }
        return AttestationOutcome(type: .anonCA, trustPath: certificates)
    }

    /// The nonce extension's value: `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }` (also App Attest's).
    static func nonce(from extensionValue: ArraySlice<UInt8>) throws -> [UInt8] {
        let root = try DER.parse(extensionValue)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            let node = try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { inner in
                try ASN1OctetString(derEncoded: inner)
            }
            return Array(node.bytes)
        }
    }
}
