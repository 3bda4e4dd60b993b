import Crypto
import Foundation
import SwiftASN1
import Testing
import TouchstoneCrypto
import X509

@testable import TouchstoneWebAuthn

/// Packed attestation with certificates made here, to reach each certificate requirement of §8.2.1.
struct PackedCertificateTests {
    static let rpId = "example.org"
    static let origin = "https://example.org"
    static let challenge: [UInt8] = Array(repeating: 7, count: 32)
    static let aaguid: [UInt8] = Array(1...16)

    struct Authority {
        let key = P256.Signing.PrivateKey()
        let name: DistinguishedName
        let certificate: Certificate

        init() throws {
            self.name = try DistinguishedName {
                CountryName("AA")
                OrganizationName("Touchstone tests")
                CommonName("Test attestation root")
            }
            let now = Date()
            self.certificate = try Certificate(
                version: .v3,
                serialNumber: .init(),
                publicKey: .init(self.key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600),
                notValidAfter: now.addingTimeInterval(3600 * 24),
                issuer: self.name,
                subject: self.name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true))
                },
                issuerPrivateKey: .init(self.key)
            )
        }

        /// An attestation certificate for `key`.
        func issue(
            for key: P256.Signing.PrivateKey,
            unit: String = "Authenticator Attestation",
            isCA: Bool = false,
            aaguid: [UInt8]? = PackedCertificateTests.aaguid,
            aaguidCritical: Bool = false
        ) throws -> Certificate {
            let subject = try DistinguishedName {
                CountryName("AA")
                OrganizationName("Touchstone tests")
                OrganizationalUnitName(unit)
                CommonName("Test authenticator")
            }
            var extensions = try Certificate.Extensions {
                Critical(isCA ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : BasicConstraints.notCertificateAuthority)
            }
            if let aaguid {
                try extensions.append(
                    Certificate.Extension(oid: AttestationOID.fidoAAGUID, critical: aaguidCritical, value: [0x04, 0x10] + aaguid[...])
                )
            }
            let now = Date()
            return try Certificate(
                version: .v3,
                serialNumber: .init(),
                publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600),
                notValidAfter: now.addingTimeInterval(3600 * 24),
                issuer: self.name,
                subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions,
                issuerPrivateKey: .init(self.key)
            )
        }
    }

    /// A packed registration whose statement is signed by `attestationKey` and carries `certificate`.
    static func registration(attestationKey: P256.Signing.PrivateKey, certificate: Certificate) throws -> (clientData: [UInt8], object: [UInt8]) {
        var authenticator = VirtualAuthenticator()
        authenticator.aaguid = Self.aaguid
        let made = authenticator.register(rpId: rpId, origin: origin, challenge: challenge, userHandle: [1])
        let signed = made.authenticatorData + Array(SHA256.hash(data: made.clientDataJSON))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let statement: CBORMap = [
            .text("alg"): .int(-7), .text("sig"): .bytes(Array(try attestationKey.signature(for: signed).derRepresentation)),
            .text("x5c"): .array([.bytes(serializer.serializedBytes)]),
        ]
        let object = CBOREncoder.encode(
            .map([.text("fmt"): .text("packed"), .text("attStmt"): .map(statement), .text("authData"): .bytes(made.authenticatorData)])
        )
        return (made.clientDataJSON, object)
    }

    static func verify(_ made: (clientData: [UInt8], object: [UInt8]), anchors: [Certificate], minimum: AttestationType = .none)
        async throws -> VerifiedRegistration
    {
        var rp = RelyingParty(id: rpId, name: "Example", origins: [origin])
        rp.trustAnchors = anchors
        rp.minimumAttestation = minimum
        return try await rp.verifyRegistration(clientDataJSON: made.clientData, attestationObject: made.object, challenge: challenge)
    }

    @Test func aConformingCertificateGivesTrustedBasicAttestation() async throws {
        let authority = try Authority()
        let key = P256.Signing.PrivateKey()
        let result = try await Self.verify(
            try Self.registration(attestationKey: key, certificate: try authority.issue(for: key)),
            anchors: [authority.certificate],
            minimum: .basic
        )
        #expect(result.attestationType == .basic)
        #expect(result.attestationTrusted)
    }

    @Test func anotherRootIsNotTrusted() async throws {
        let key = P256.Signing.PrivateKey()
        let made = try Self.registration(attestationKey: key, certificate: try Authority().issue(for: key))
        await #expect(throws: WebAuthnError(.untrustedAttestation, "")) {
            try await Self.verify(made, anchors: [try Authority().certificate], minimum: .basic)
        }
    }

    @Test func theStatementMustBeSignedByTheCertifiedKey() async throws {
        let authority = try Authority()
        let made = try Self.registration(attestationKey: P256.Signing.PrivateKey(), certificate: try authority.issue(for: P256.Signing.PrivateKey()))
        await #expect(throws: WebAuthnError(.invalidSignature, "")) { try await Self.verify(made, anchors: [authority.certificate]) }
    }

    @Test func theSubjectUnitMustBeAuthenticatorAttestation() async throws {
        let authority = try Authority()
        let key = P256.Signing.PrivateKey()
        let made = try Self.registration(attestationKey: key, certificate: try authority.issue(for: key, unit: "Something else"))
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(made, anchors: [authority.certificate]) }
    }

    @Test func theAttestationCertificateMustNotBeACA() async throws {
        let authority = try Authority()
        let key = P256.Signing.PrivateKey()
        let made = try Self.registration(attestationKey: key, certificate: try authority.issue(for: key, isCA: true))
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(made, anchors: [authority.certificate]) }
    }

    @Test func theCertificateAAGUIDMustMatchAndNotBeCritical() async throws {
        let authority = try Authority()
        let key = P256.Signing.PrivateKey()
        let other = try Self.registration(attestationKey: key, certificate: try authority.issue(for: key, aaguid: Array(repeating: 9, count: 16)))
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(other, anchors: [authority.certificate]) }
        let critical = try Self.registration(attestationKey: key, certificate: try authority.issue(for: key, aaguidCritical: true))
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(critical, anchors: [authority.certificate]) }
        // Absent is fine.
        let absent = try Self.registration(attestationKey: key, certificate: try authority.issue(for: key, aaguid: nil))
        #expect(try await Self.verify(absent, anchors: [authority.certificate]).attestationTrusted)
    }
}
