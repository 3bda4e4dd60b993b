import Crypto
import Foundation
import SwiftASN1
import Testing
import TouchstoneCrypto
import X509

@testable import TouchstoneWebAuthn

/// TPM attestation built in the test (pubArea, certInfo, AIK certificate), to reach each AIK certificate rule of
/// §8.3.1 and each structure check.
struct TPMCertificateTests {
    static let rpId = "example.org"
    static let origin = "https://example.org"
    static let challenge: [UInt8] = Array(repeating: 5, count: 32)
    static let aaguid: [UInt8] = Array(repeating: 0xA0, count: 16)

    struct AIKOptions {
        var subjectEmpty = true
        var sanCritical = true
        var manufacturer: String? = "id:FFFFF1D0"
        var model: String? = "Test TPM"
        var version: String? = "id:00020000"
        var aikUsage = true
        var isCA = false
        var aaguid: [UInt8]? = TPMCertificateTests.aaguid
    }

    static func aik(for key: P256.Signing.PublicKey, _ options: AIKOptions) throws -> [UInt8] {
        let issuerKey = P256.Signing.PrivateKey()
        let issuer = try DistinguishedName { CommonName("TPM attestation CA") }
        var attributes: [RelativeDistinguishedName.Attribute] = []
        if let value = options.manufacturer { attributes.append(.init(type: [2, 23, 133, 2, 1], utf8String: value)) }
        if let value = options.model { attributes.append(.init(type: [2, 23, 133, 2, 2], utf8String: value)) }
        if let value = options.version { attributes.append(.init(type: [2, 23, 133, 2, 3], utf8String: value)) }
        var extensions = Certificate.Extensions()
        try extensions.append(
            Certificate.Extension(
                SubjectAlternativeNames([.directoryName(DistinguishedName([RelativeDistinguishedName(attributes)]))]),
                critical: options.sanCritical
            )
        )
        let constraints: BasicConstraints = options.isCA ? .isCertificateAuthority(maxPathLength: nil) : .notCertificateAuthority
        try extensions.append(try Certificate.Extension(constraints, critical: true))
        if options.aikUsage {
            try extensions.append(try Certificate.Extension(try ExtendedKeyUsage([.init(oid: [2, 23, 133, 8, 3])]), critical: false))
        }
        if let aaguid = options.aaguid {
            try extensions.append(Certificate.Extension(oid: AttestationOID.fidoAAGUID, critical: false, value: [0x04, 0x10] + aaguid[...]))
        }
        let subject = options.subjectEmpty ? DistinguishedName() : try DistinguishedName { CommonName("Not empty") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key), notValidBefore: Date().addingTimeInterval(-60),
            notValidAfter: Date().addingTimeInterval(3600), issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions, issuerPrivateKey: .init(issuerKey))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func sized(_ bytes: [UInt8]) -> [UInt8] { u16(UInt16(bytes.count)) + bytes }

    struct Tamper {
        var aik = AIKOptions()
        var extraData: (([UInt8]) -> [UInt8])? = nil
        var magic: UInt32 = TPMAttestation.generatedValue
        var otherPubAreaKey = false
        var nameOfOtherArea = false
    }

    /// A TPM registration (ES256 credential, ES256 AIK) with one thing changed.
    static func registration(_ tamper: Tamper = Tamper()) throws -> (clientData: [UInt8], object: [UInt8]) {
        var authenticator = VirtualAuthenticator()
        authenticator.aaguid = Self.aaguid
        let made = authenticator.register(rpId: rpId, origin: origin, challenge: challenge, userHandle: [1])
        let map = try #require(try CBORDecoder().decode(made.credential.publicKeyCOSE).mapValue)
        var x = try #require(map[int: -2]?.bytesValue)
        let y = try #require(map[int: -3]?.bytesValue)
        if tamper.otherPubAreaKey { x[0] ^= 1 }
        // TPMT_PUBLIC: ECC, SHA-256 name, attributes, empty policy, NULL symmetric and scheme, P-256, NULL kdf, x, y.
        let pubArea = u16(0x0023) + u16(0x000B) + [0x00, 0x04, 0x00, 0x72] + sized([]) + u16(0x0010) + u16(0x0010)
            + u16(0x0003) + u16(0x0010) + sized(x) + sized(y)
        let hash = Array(SHA256.hash(data: made.clientDataJSON))
        let extraData = tamper.extraData?(made.authenticatorData + hash) ?? Array(SHA256.hash(data: made.authenticatorData + hash))
        let namedArea = tamper.nameOfOtherArea ? pubArea + [0] : pubArea
        let name = u16(0x000B) + Array(SHA256.hash(data: namedArea))
        let magic = withUnsafeBytes(of: tamper.magic.bigEndian, Array.init)
        let certInfo = magic + u16(0x8017) + sized([]) + sized(extraData) + [UInt8](repeating: 0, count: 17)
            + [UInt8](repeating: 0, count: 8) + sized(name) + sized([])
        let aikKey = P256.Signing.PrivateKey()
        let statement: CBORMap = [
            .text("ver"): .text("2.0"), .text("alg"): .int(-7), .text("x5c"): .array([.bytes(try aik(for: aikKey.publicKey, tamper.aik))]),
            .text("sig"): .bytes(Array(try aikKey.signature(for: certInfo).derRepresentation)), .text("certInfo"): .bytes(certInfo),
            .text("pubArea"): .bytes(pubArea),
        ]
        let object = CBOREncoder.encode(
            .map([.text("fmt"): .text("tpm"), .text("attStmt"): .map(statement), .text("authData"): .bytes(made.authenticatorData)]))
        return (made.clientDataJSON, object)
    }

    static func verify(_ made: (clientData: [UInt8], object: [UInt8])) async throws -> VerifiedRegistration {
        let rp = RelyingParty(id: rpId, name: "Example", origins: [origin])
        return try await rp.verifyRegistration(clientDataJSON: made.clientData, attestationObject: made.object, challenge: challenge)
    }

    static func expectFailure(_ reason: String, _ tamper: Tamper) async throws {
        let made = try Self.registration(tamper)
        do {
            _ = try await Self.verify(made)
            Issue.record("expected a failure: \(reason)")
        } catch let error as WebAuthnError {
            #expect(error.reason == reason)
        }
    }

    @Test func aConformingTPMAttestationIsAttCA() async throws {
        let result = try await Self.verify(try Self.registration())
        #expect(result.format == "tpm")
        #expect(result.attestationType == .attCA)
    }

    @Test func structureChecks() async throws {
        try await Self.expectFailure("certInfo is not a TPM-generated certification", Tamper(magic: 0x1234_5678))
        try await Self.expectFailure(
            "certInfo extraData is not the hash of authenticatorData ‖ clientDataHash", Tamper(extraData: { Array(SHA256.hash(data: $0 + [0])) }))
        try await Self.expectFailure("certInfo does not name pubArea", Tamper(nameOfOtherArea: true))
        try await Self.expectFailure("pubArea's EC key is not the credential key", Tamper(otherPubAreaKey: true))
    }

    @Test func aikCertificateRules() async throws {
        func with(_ change: (inout AIKOptions) -> Void) -> Tamper {
            var tamper = Tamper()
            change(&tamper.aik)
            return tamper
        }
        try await Self.expectFailure("AIK certificate subject must be empty", with { $0.subjectEmpty = false })
        try await Self.expectFailure("AIK certificate needs a critical subject alternative name", with { $0.sanCritical = false })
        try await Self.expectFailure("AIK certificate SAN must name the TPM manufacturer, model and version", with { $0.model = nil })
        try await Self.expectFailure("AIK certificate SAN must name the TPM manufacturer, model and version", with { $0.manufacturer = nil })
        try await Self.expectFailure("AIK certificate TPM manufacturer 'Acme' is malformed", with { $0.manufacturer = "Acme" })
        try await Self.expectFailure("AIK certificate lacks the tcg-kp-AIKCertificate extended key usage", with { $0.aikUsage = false })
        try await Self.expectFailure("AIK certificate must not be a CA", with { $0.isCA = true })
        try await Self.expectFailure(
            "the AIK certificate's AAGUID differs from the authenticator data's", with { $0.aaguid = Array(repeating: 1, count: 16) })
    }
}
