import Crypto
import SwiftASN1
import X509

/// `tpm` (WebAuthn Level 3 §8.3): a TPM's attestation identity key certifies the credential key.
///
/// https://www.w3.org/TR/webauthn-3/#sctn-tpm-attestation
enum TPMAttestation: AttestationFormatVerifier {
    static let identifier = "tpm"

    // TPM 2.0 Part 2 constants.
    static let generatedValue: UInt32 = 0xFF54_4347  // TPM_GENERATED_VALUE
    static let attestCertify: UInt16 = 0x8017  // TPM_ST_ATTEST_CERTIFY
    static let algRSA: UInt16 = 0x0001
    static let algECC: UInt16 = 0x0023
    static let algNull: UInt16 = 0x0010

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationOutcome {
        // Step 1: ver is "2.0"; the statement has alg, x5c, sig, certInfo and pubArea.
        guard input.statement[text: "ver"]?.textValue == "2.0" else {
            throw WebAuthnError(.invalidAttestation, "tpm ver must be 2.0")
        }
        guard let pubAreaBytes = input.statement[text: "pubArea"]?.bytesValue,
            let certInfoBytes = input.statement[text: "certInfo"]?.bytesValue
        else {
            throw WebAuthnError(.invalidAttestation, "tpm statement lacks pubArea or certInfo")
        }
        let algorithm = try input.algorithm()
        let signature = try input.signature()
        // Step 2: the key in pubArea is the credential public key.
        let pubArea = try PublicArea(bytes: pubAreaBytes)
        try pubArea.matches(input.credential.publicKey)
        // Step 3: certInfo is a TPM-generated certification whose extraData is the hash of attToBeSigned and whose
        // name is the name of pubArea.
        let certInfo = try CertifyInfo(bytes: certInfoBytes)
        guard certInfo.magic == generatedValue, certInfo.type == attestCertify else {
            throw WebAuthnError(.invalidAttestation, "certInfo is not a TPM-generated certification")
        }
        guard certInfo.extraData == Self.hash(input.signedData, for: algorithm) else {
            throw WebAuthnError(.invalidAttestation, "certInfo extraData is not the hash of authenticatorData ‖ clientDataHash")
        }
        guard let nameHash = Self.hash(pubAreaBytes, nameAlgorithm: pubArea.nameAlgorithm),
            certInfo.attestedName == [UInt8(pubArea.nameAlgorithm >> 8), UInt8(pubArea.nameAlgorithm & 0xFF)] + nameHash
        else {
            throw WebAuthnError(.invalidAttestation, "certInfo does not name pubArea")
        }
        // Step 4: sig over certInfo by the attestation identity key of x5c[0].
        let certificates = try input.certificates()
        let aik = certificates[0]
        guard let verifier = SignatureVerifier(certificateKey: aik.publicKey, algorithm: algorithm),
            verifier.isValidSignature(signature, for: certInfoBytes)
        else {
            throw WebAuthnError(.invalidSignature, "tpm attestation signature over certInfo does not verify")
        }
        // Step 5: the AIK certificate meets §8.3.1.
        try self.checkCertificateRequirements(aik, aaguid: input.credential.aaguid)
        return AttestationOutcome(type: .attCA, trustPath: certificates)
    }

    /// §8.3.1: v3, empty subject, a critical SAN naming the TPM, the AIK extended key usage, not a CA.
    static func checkCertificateRequirements(_ certificate: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard certificate.version == .v3 else { throw WebAuthnError(.invalidAttestation, "AIK certificate must be v3") }
        guard certificate.subject.isEmpty else { throw WebAuthnError(.invalidAttestation, "AIK certificate subject must be empty") }
        guard let san = certificate.extensions[oid: .X509ExtensionID.subjectAlternativeName], san.critical,
            let names = try? certificate.extensions.subjectAlternativeNames
        else {
            throw WebAuthnError(.invalidAttestation, "AIK certificate needs a critical subject alternative name")
        }
        var attributes: [ASN1ObjectIdentifier: String] = [:]
        for name in names {
            if case .directoryName(let directory) = name {
                for attribute in directory.flatMap({ $0 }) { attributes[attribute.type] = String(describing: attribute.value) }
            }
        }
        let manufacturerOID: ASN1ObjectIdentifier = [2, 23, 133, 2, 1]
        let modelOID: ASN1ObjectIdentifier = [2, 23, 133, 2, 2]
        let versionOID: ASN1ObjectIdentifier = [2, 23, 133, 2, 3]
        guard let manufacturer = attributes[manufacturerOID], attributes[modelOID] != nil, attributes[versionOID] != nil else {
            throw WebAuthnError(.invalidAttestation, "AIK certificate SAN must name the TPM manufacturer, model and version")
        }
        // The manufacturer is "id:" and eight hex digits (TCG vendor id); which vendors to trust is the trust
        // anchors' business.
        guard manufacturer.hasPrefix("id:"), manufacturer.count == 11,
            manufacturer.dropFirst(3).allSatisfy({ $0.isHexDigit })
        else {
            throw WebAuthnError(.invalidAttestation, "AIK certificate TPM manufacturer '\(manufacturer)' is malformed")
        }
        let aikUsage = ExtendedKeyUsage.Usage(oid: [2, 23, 133, 8, 3])
        guard let usages = try? certificate.extensions.extendedKeyUsage, usages.contains(aikUsage) else {
            throw WebAuthnError(.invalidAttestation, "AIK certificate lacks the tcg-kp-AIKCertificate extended key usage")
        }
        if case .isCertificateAuthority = (try? certificate.extensions.basicConstraints) ?? .notCertificateAuthority {
            throw WebAuthnError(.invalidAttestation, "AIK certificate must not be a CA")
        }
        if let extensionValue = certificate.extensions[oid: AttestationOID.fidoAAGUID] {
            guard let inner = try? ASN1OctetString(derEncoded: extensionValue.value), Array(inner.bytes) == aaguid else {
                throw WebAuthnError(.invalidAttestation, "the AIK certificate's AAGUID differs from the authenticator data's")
            }
        }
    }

    static func hash(_ data: [UInt8], for algorithm: COSEAlgorithm) -> [UInt8] {
        switch algorithm {
        case .es384, .rs384, .ps384: Array(SHA384.hash(data: data))
        case .es512, .rs512, .ps512: Array(SHA512.hash(data: data))
        case .rs1: Array(Insecure.SHA1.hash(data: data))
        default: Array(SHA256.hash(data: data))
        }
    }

    static func hash(_ data: [UInt8], nameAlgorithm: UInt16) -> [UInt8]? {
        switch nameAlgorithm {
        case 0x0004: Array(Insecure.SHA1.hash(data: data))
        case 0x000B: Array(SHA256.hash(data: data))
        case 0x000C: Array(SHA384.hash(data: data))
        case 0x000D: Array(SHA512.hash(data: data))
        default: nil
        }
    }
}

// MARK: - TPM structures

/// Big-endian reads with bounds checks: TPM structures come from the network.
struct TPMReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func u8() throws(WebAuthnError) -> UInt8 { try self.take(1)[0] }
    mutating func u16() throws(WebAuthnError) -> UInt16 { try self.take(2).reduce(0) { ($0 << 8) | UInt16($1) } }
    mutating func u32() throws(WebAuthnError) -> UInt32 { try self.take(4).reduce(0) { ($0 << 8) | UInt32($1) } }
    mutating func u64() throws(WebAuthnError) -> UInt64 { try self.take(8).reduce(0) { ($0 << 8) | UInt64($1) } }

    /// A TPM2B: a 16-bit size, then that many bytes.
    mutating func sized() throws(WebAuthnError) -> [UInt8] { try self.take(Int(try self.u16())) }

    mutating func take(_ count: Int) throws(WebAuthnError) -> [UInt8] {
        guard count >= 0, self.bytes.count - self.offset >= count else {
            throw WebAuthnError(.invalidAttestation, "TPM structure is truncated")
        }
        defer { self.offset += count }
        return Array(self.bytes[self.offset..<(self.offset + count)])
    }

    var isAtEnd: Bool { self.offset == self.bytes.count }
}

/// TPMT_PUBLIC (TPM 2.0 Part 2 §12.2.4), for RSA and ECC keys.
struct PublicArea {
    enum Key {
        case rsa(modulus: [UInt8], exponent: UInt32)
        case ecc(curve: UInt16, x: [UInt8], y: [UInt8])
    }

    let nameAlgorithm: UInt16
    let key: Key

    init(bytes: [UInt8]) throws(WebAuthnError) {
        var reader = TPMReader(bytes: bytes)
        let type = try reader.u16()
        self.nameAlgorithm = try reader.u16()
        _ = try reader.u32()  // objectAttributes
        _ = try reader.sized()  // authPolicy
        switch type {
        case TPMAttestation.algRSA:
            if try reader.u16() != TPMAttestation.algNull { _ = try reader.take(4) }  // symmetric: algorithm, keyBits, mode
            if try reader.u16() != TPMAttestation.algNull { _ = try reader.u16() }  // scheme and its hash
            _ = try reader.u16()  // keyBits
            let exponent = try reader.u32()
            let modulus = try reader.sized()
            self.key = .rsa(modulus: modulus, exponent: exponent == 0 ? 65537 : exponent)
        case TPMAttestation.algECC:
            if try reader.u16() != TPMAttestation.algNull { _ = try reader.take(4) }
            if try reader.u16() != TPMAttestation.algNull { _ = try reader.u16() }
            let curve = try reader.u16()
            if try reader.u16() != TPMAttestation.algNull { _ = try reader.u16() }  // kdf
            let x = try reader.sized()
            let y = try reader.sized()
            self.key = .ecc(curve: curve, x: x, y: y)
        default:
            throw WebAuthnError(.invalidAttestation, "pubArea key type \(type) is not RSA or ECC")
        }
        guard reader.isAtEnd else { throw WebAuthnError(.invalidAttestation, "pubArea has trailing bytes") }
    }

    /// Fails unless this key is `credentialKey`.
    func matches(_ credentialKey: COSEKey) throws(WebAuthnError) {
        guard let map = credentialKey.cbor.mapValue else { throw WebAuthnError(.invalidAttestation, "credential key is not a map") }
        switch self.key {
        case .rsa(let modulus, let exponent):
            let e = map[int: -2]?.bytesValue?.reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
            guard map[int: 1]?.intValue == 3, map[int: -1]?.bytesValue == modulus, e == exponent else {
                throw WebAuthnError(.invalidAttestation, "pubArea's RSA key is not the credential key")
            }
        case .ecc(let curve, let x, let y):
            // TPM_ECC_NIST_P256/P384/P521 = 3/4/5; COSE curves 1/2/3.
            let coseCurve: Int? = [0x0003: 1, 0x0004: 2, 0x0005: 3][curve]
            guard map[int: 1]?.intValue == 2, map[int: -1]?.intValue == coseCurve, map[int: -2]?.bytesValue == x,
                map[int: -3]?.bytesValue == y
            else {
                throw WebAuthnError(.invalidAttestation, "pubArea's EC key is not the credential key")
            }
        }
    }
}

/// TPMS_ATTEST with TPMS_CERTIFY_INFO (TPM 2.0 Part 2 §10.12).
struct CertifyInfo {
    let magic: UInt32
    let type: UInt16
    let extraData: [UInt8]
    let attestedName: [UInt8]

    init(bytes: [UInt8]) throws(WebAuthnError) {
        var reader = TPMReader(bytes: bytes)
        self.magic = try reader.u32()
        self.type = try reader.u16()
        _ = try reader.sized()  // qualifiedSigner
        self.extraData = try reader.sized()
        _ = try reader.take(17)  // clockInfo: clock, resetCount, restartCount, safe
        _ = try reader.u64()  // firmwareVersion
        self.attestedName = try reader.sized()
        _ = try reader.sized()  // qualifiedName
        guard reader.isAtEnd else { throw WebAuthnError(.invalidAttestation, "certInfo has trailing bytes") }
    }
}
