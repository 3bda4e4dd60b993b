import Crypto
import SwiftASN1
import X509
import _CryptoExtras

/// `android-key` (WebAuthn Level 3 §8.4): Android's hardware-backed keystore attests the credential key.
///
/// https://www.w3.org/TR/webauthn-3/#sctn-android-key-attestation
enum AndroidKeyAttestation: AttestationFormatVerifier {
    static let identifier = "android-key"

    /// The Android key attestation extension (KeyDescription).
    static let keyDescriptionOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]
    static let purposeTag: UInt = 1
    static let allApplicationsTag: UInt = 600
    static let originTag: UInt = 702
    static let originGenerated = 0  // KM_ORIGIN_GENERATED
    static let purposeSign = 2  // KM_PURPOSE_SIGN

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
        guard let extensionValue = leaf.extensions[oid: Self.keyDescriptionOID] else {
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
        guard origins.contains(Self.originGenerated), purposes.contains(Self.purposeSign) else {
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
        case .rs256, .ps256, .rs1:
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

/// The parts of Android's KeyDescription (keymaster attestation schema) that WebAuthn checks.
struct KeyDescription {
    struct AuthorizationList {
        var purposes: [Int] = []
        var origin: Int?
        var allApplications = false
    }

    var attestationChallenge: [UInt8]
    var softwareEnforced: AuthorizationList
    var teeEnforced: AuthorizationList

    init(der: ArraySlice<UInt8>) throws {
        let root = try DER.parse(der)
        guard case .constructed(let fields) = root.content else { throw ASN1Error.invalidASN1Object(reason: "not a sequence") }
        let nodes = Array(fields)
        // attestationVersion, attestationSecurityLevel, keymasterVersion, keymasterSecurityLevel, attestationChallenge,
        // uniqueId, softwareEnforced, teeEnforced.
        guard nodes.count >= 8 else { throw ASN1Error.invalidASN1Object(reason: "KeyDescription is too short") }
        self.attestationChallenge = Array(try ASN1OctetString(derEncoded: nodes[4]).bytes)
        self.softwareEnforced = try Self.authorizationList(nodes[6])
        self.teeEnforced = try Self.authorizationList(nodes[7])
    }

    private static func authorizationList(_ node: ASN1Node) throws -> AuthorizationList {
        guard case .constructed(let entries) = node.content else { throw ASN1Error.invalidASN1Object(reason: "not a list") }
        var list = AuthorizationList()
        for entry in entries where entry.identifier.tagClass == .contextSpecific {
            guard case .constructed(let wrapped) = entry.content, let inner = Array(wrapped).first else { continue }
            switch entry.identifier.tagNumber {
            case AndroidKeyAttestation.purposeTag:
                guard case .constructed(let values) = inner.content else { continue }
                list.purposes = try values.map { try Int(derEncoded: $0) }
            case AndroidKeyAttestation.originTag:
                list.origin = try Int(derEncoded: inner)
            case AndroidKeyAttestation.allApplicationsTag:
                list.allApplications = true
            default:
                continue
            }
        }
        return list
    }
}
