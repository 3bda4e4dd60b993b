import Crypto
import SwiftASN1
import TouchstoneCrypto
import X509

/// What an attestation statement format verifier gets (WebAuthn Level 3 §8).
struct AttestationInput {
    var statement: CBORMap
    var authData: AuthenticatorData
    var credential: AuthenticatorData.AttestedCredentialData
    var clientDataHash: [UInt8]

    /// authenticatorData ‖ clientDataHash: what most formats sign.
    var signedData: [UInt8] { self.authData.rawValue + self.clientDataHash }
}

/// What a format verifier established.
struct AttestationOutcome {
    var type: AttestationType
    /// The attestation certificate first, then its chain as given (empty for none and self).
    var trustPath: [Certificate]
}

/// One attestation statement format.
protocol AttestationFormatVerifier {
    static var identifier: String { get }
    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationOutcome
}

/// The formats this relying party understands, by `fmt` identifier.
enum AttestationFormats {
    static let all: [String: any AttestationFormatVerifier.Type] = [
        NoneAttestation.identifier: NoneAttestation.self,
        PackedAttestation.identifier: PackedAttestation.self,
        FIDOU2FAttestation.identifier: FIDOU2FAttestation.self,
        AppleAttestation.identifier: AppleAttestation.self,
        TPMAttestation.identifier: TPMAttestation.self,
        AndroidKeyAttestation.identifier: AndroidKeyAttestation.self,
    ]
}

// MARK: - Shared helpers

extension AttestationInput {
    /// The `x5c` certificates, attestation certificate first.
    func certificates() throws(WebAuthnError) -> [Certificate] {
        guard let list = self.statement[text: "x5c"]?.arrayValue, !list.isEmpty else {
            throw WebAuthnError(.invalidAttestation, "x5c is missing or empty")
        }
        guard list.count <= 8 else { throw WebAuthnError(.invalidAttestation, "x5c is too long") }
        var certificates: [Certificate] = []
        for (index, item) in list.enumerated() {
            guard let der = item.bytesValue else { throw WebAuthnError(.invalidAttestation, "x5c holds something that is not a DER certificate") }
            if let certificate = try? Certificate(derEncoded: der) {
                certificates.append(certificate)
                continue
            }
            // The attestation certificate must parse. A CA certificate after it that swift-certificates refuses but that
            // is DER (real TPM chains carry CA certificates with negative serial numbers) is left out: it serves only to
            // build a path to a trust anchor, which then fails without it.
            guard index > 0, (try? DER.parse(der)) != nil else {
                throw WebAuthnError(.invalidAttestation, "x5c holds something that is not a DER certificate")
            }
        }
        return certificates
    }

    /// The `sig` bytes.
    func signature() throws(WebAuthnError) -> [UInt8] {
        guard let signature = self.statement[text: "sig"]?.bytesValue, !signature.isEmpty else {
            throw WebAuthnError(.invalidAttestation, "sig is missing")
        }
        return signature
    }

    /// The `alg` of the statement.
    func algorithm() throws(WebAuthnError) -> COSEAlgorithm {
        guard let value = self.statement[text: "alg"]?.intValue, let algorithm = COSEAlgorithm(rawValue: value) else {
            throw WebAuthnError(.invalidAttestation, "alg is missing or unsupported")
        }
        return algorithm
    }
}

extension SignatureVerifier {
    /// A verifier for a certificate's public key with a COSE algorithm, or `nil` when they do not match.
    init?(certificateKey key: Certificate.PublicKey, algorithm: COSEAlgorithm) {
        switch algorithm {
        case .es256: guard let key = P256.Signing.PublicKey(key) else { return nil }; self.init(key: .p256(key), algorithm: algorithm)
        case .es384: guard let key = P384.Signing.PublicKey(key) else { return nil }; self.init(key: .p384(key), algorithm: algorithm)
        case .es512: guard let key = P521.Signing.PublicKey(key) else { return nil }; self.init(key: .p521(key), algorithm: algorithm)
        case .eddsa:
            guard let key = Curve25519.Signing.PublicKey(key), Ed25519KeyValidation.isValid(key.rawRepresentation) else { return nil }
            self.init(key: .ed25519(key), algorithm: algorithm)
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .rs1:
            guard let key = _RSA.Signing.PublicKey(key) else { return nil }
            self.init(key: .rsa(key), algorithm: algorithm)
        }
    }
}

import _CryptoExtras

/// Object identifiers used by attestation formats.
enum AttestationOID {
    /// id-fido-gen-ce-aaguid: the AAGUID in a packed attestation certificate.
    static let fidoAAGUID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]
    /// Apple anonymous attestation nonce.
    static let appleNonce: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]
    static let organizationalUnit: ASN1ObjectIdentifier = [2, 5, 4, 11]
}
