import Crypto
import Foundation
import SwiftASN1
import Testing
import TouchstoneCrypto
import TouchstoneTesting
import X509

@testable import TouchstoneWebAuthn

/// FIDO Metadata Service BLOBs: what is accepted, what is refused and why; then what a registration makes of them.
struct MetadataBLOBTests {
    /// 2027-01-15, inside the test service's certificates.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func verify(_ jws: String, _ service: TestMetadataService, newerThan current: Int? = nil, at time: Date = now)
        async throws(MetadataError) -> MetadataBLOB
    {
        try await MetadataBLOB.verify(jws: jws, roots: [service.root], at: time, newerThan: current)
    }

    @Test(arguments: [false, true])
    func aBLOBSignedByTheServiceVerifiesAndIsIndexed(rsa: Bool) async throws {
        let service = try TestMetadataService(rsa: rsa)
        let blob = try await Self.verify(
            try service.blob(
                number: 42,
                nextUpdate: "2027-02-01",
                entries: [
                    try TestMetadataService.entry(aaguid: "CB69481E-8FF7-4039-93EC-0A2729A154A8", description: "Test Key", icon: "data:image/png;base64,AAAA"),
                    try TestMetadataService.entry(keyIdentifiers: ["ABCDEF0123"], description: "Test U2F"),
                    try TestMetadataService.entry(description: "A UAF model (neither)"),
                ]
            ),
            service
        )
        #expect(blob.number == 42)
        #expect(blob.nextUpdate == Date(timeIntervalSince1970: 1_801_440_000))  // 2027-02-01T00:00:00Z
        #expect(blob.entries.count == 3)
        let key = try #require(blob.entry(aaguid: "cb69481e-8ff7-4039-93ec-0a2729a154a8"))
        #expect(key.description == "Test Key")
        #expect(key.icon == "data:image/png;base64,AAAA")
        #expect(key.isCertified)
        #expect(blob.entry(keyIdentifier: "abcdef0123")?.description == "Test U2F")
        #expect(blob.entry(aaguid: MetadataEntry.zeroAAGUID) == nil)
    }

    @Test func theFIDORootIsGlobalSignRootR3() throws {
        let root = try #require(MetadataBLOB.fidoRoots.first)
        #expect(MetadataBLOB.fidoRoots.count == 1)
        var serializer = DER.Serializer()
        try serializer.serialize(root)
        // The fingerprint GlobalSign and the FIDO Alliance publish.
        #expect(Hex.encode(SHA256.hash(data: serializer.serializedBytes)) == "cbb522d7b7f127ad6a0113865bdf1cd4102e7d0759af635a7cf4720dc963c53b")
        #expect(root.notValidAfter == Date(timeIntervalSince1970: 1_868_522_400))  // 2029-03-18T10:00:00Z
    }

    @Test func aTamperedPayloadOrAnotherSignerIsRefused() async throws {
        let service = try TestMetadataService()
        let jws = try service.blob(number: 1, nextUpdate: "2027-02-01", entries: [])
        var parts = jws.split(separator: ".").map(String.init)
        parts[1] = Base64.urlEncode(Array(#"{"no":2,"nextUpdate":"2027-02-01","entries":[]}"#.utf8))
        await #expect(throws: MetadataError(.invalidSignature, "")) { try await Self.verify(parts.joined(separator: "."), service) }
        // The chain of one service, the signature of another.
        let other = try TestMetadataService()
        let otherParts = try other.blob(number: 1, nextUpdate: "2027-02-01", entries: []).split(separator: ".")
        parts = jws.split(separator: ".").map(String.init)
        parts[2] = String(otherParts[2])
        await #expect(throws: MetadataError(.invalidSignature, "")) { try await Self.verify(parts.joined(separator: "."), service) }
    }

    @Test func aChainToAnotherRootOrOutsideItsValidityIsRefused() async throws {
        let service = try TestMetadataService()
        let jws = try service.blob(number: 1, nextUpdate: "2027-02-01", entries: [])
        let stranger = try TestMetadataService()
        await #expect(throws: MetadataError(.untrustedChain, "")) {
            try await MetadataBLOB.verify(jws: jws, roots: [stranger.root], at: Self.now)
        }
        await #expect(throws: MetadataError(.untrustedChain, "")) {
            try await MetadataBLOB.verify(jws: jws, roots: [], at: Self.now)
        }
        // The real FIDO root does not vouch for a test signer.
        await #expect(throws: MetadataError(.untrustedChain, "")) {
            try await MetadataBLOB.verify(jws: jws, roots: MetadataBLOB.fidoRoots, at: Self.now)
        }
        // A signer whose certificate expired a day before.
        let expired = try TestMetadataService(validity: Date(timeIntervalSince1970: 1_700_000_000)...Self.now.addingTimeInterval(-86_400))
        await #expect(throws: MetadataError(.untrustedChain, "")) {
            try await Self.verify(try expired.blob(number: 1, nextUpdate: "2027-02-01", entries: []), expired)
        }
    }

    @Test func aBLOBThatIsNotNewerIsRefused() async throws {
        let service = try TestMetadataService()
        let jws = try service.blob(number: 7, nextUpdate: "2027-02-01", entries: [])
        #expect(try await Self.verify(jws, service, newerThan: 6).number == 7)
        await #expect(throws: MetadataError(.notNewer, "")) { try await Self.verify(jws, service, newerThan: 7) }
        await #expect(throws: MetadataError(.notNewer, "")) { try await Self.verify(jws, service, newerThan: 8) }
    }

    @Test func aStaleBLOBIsRefused() async throws {
        let service = try TestMetadataService()
        // 2027-01-15 is nextUpdate's day: still accepted.
        let due = try await Self.verify(try service.blob(number: 1, nextUpdate: "2027-01-15", entries: []), service)
        #expect(!due.isStale(at: Self.now))
        #expect(due.isStale(at: Self.now.addingTimeInterval(86_400)))
        await #expect(throws: MetadataError(.stale, "")) {
            try await Self.verify(try service.blob(number: 1, nextUpdate: "2027-01-14", entries: []), service)
        }
    }

    @Test(arguments: [
        "",
        "a.b",
        "a.b.c.d",
        "!!.e30.AA",
    ])
    func malformedBLOBsAreRefused(jws: String) async throws {
        let service = try TestMetadataService()
        await #expect(throws: MetadataError(.malformed, "")) { try await Self.verify(jws, service) }
    }

    @Test func malformedContentsAreRefusedOnceTheSignatureVerifies() async throws {
        let service = try TestMetadataService()
        let payloads = [
            "not json",
            #"{"no":1,"entries":[]}"#,
            #"{"no":1,"nextUpdate":"2027-13-01","entries":[]}"#,
            #"{"no":1,"nextUpdate":"2027-02-30","entries":[]}"#,
            #"{"no":"one","nextUpdate":"2027-02-01","entries":[]}"#,
            #"{"no":1,"nextUpdate":"2027-02-01","entries":[{"aaguid":"not-a-uuid","statusReports":[]}]}"#,
            #"{"no":1,"nextUpdate":"2027-02-01","entries":[{"statusReports":[{"status":"FIDO_CERTIFIED","effectiveDate":"soon"}]}]}"#,
            #"{"no":1,"nextUpdate":"2027-02-01","entries":[{"metadataStatement":{"attestationRootCertificates":["AAAA"]},"statusReports":[]}]}"#,
        ]
        for payload in payloads {
            let jws = try service.sign(payload: Array(payload.utf8))
            await #expect(throws: MetadataError(.malformed, ""), "\(payload)") { try await Self.verify(jws, service) }
        }
        // No x5c in the header.
        let parts = try service.blob(number: 1, nextUpdate: "2027-02-01", entries: []).split(separator: ".")
        let noChain = Base64.urlEncode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + parts[1] + "." + parts[2]
        await #expect(throws: MetadataError(.malformed, "")) { try await Self.verify(noChain, service) }
        // An algorithm outside the list.
        let none = Base64.urlEncode(Array(#"{"alg":"none","x5c":[]}"#.utf8)) + "." + parts[1] + "." + parts[2]
        await #expect(throws: MetadataError(.malformed, "")) { try await Self.verify(none, service) }
    }

    @Test func statusReportsAreReadInDateOrder() throws {
        let entry = MetadataEntry(
            aaguid: nil,
            description: "x",
            statusReports: [
                StatusReport(status: .fidoCertifiedL1, effectiveDate: "2020-01-01"),
                StatusReport(status: .userVerificationBypass, effectiveDate: "2021-01-01"),
            ]
        )
        #expect(entry.status == .userVerificationBypass)
        #expect(entry.isCertified)  // a compromise is not a certification decision
        #expect(entry.activeReport(refusing: AuthenticatorStatus.compromised, attestationCertificate: nil)?.status == .userVerificationBypass)
        #expect(entry.activeReport(refusing: [], attestationCertificate: nil) == nil)
        var recertified = entry
        recertified.statusReports.append(StatusReport(status: .fidoCertifiedL2, effectiveDate: "2022-01-01"))
        #expect(recertified.activeReport(refusing: AuthenticatorStatus.compromised, attestationCertificate: nil) == nil)
        var revoked = entry
        revoked.statusReports.append(StatusReport(status: .revoked, effectiveDate: "2022-01-01"))
        #expect(!revoked.isCertified)
        #expect(revoked.activeReport(refusing: AuthenticatorStatus.compromised, attestationCertificate: nil)?.status == .revoked)
    }
}

/// Registrations checked against metadata: trust anchors per model, status reports, certified-only.
struct MetadataRegistrationTests {
    typealias Vector = SpecVectorTests.Vectors.Registration

    static var vectorRoot: Certificate {
        get throws { try Certificate(derEncoded: try #require(Base64.decode(SpecVectorTests.vectors.attestationCACertificateDER))) }
    }

    /// The relying party of the vectors without configured anchors, with a BLOB of `entries`.
    static func relyingParty(_ entries: [[String: any Sendable]]) async throws -> RelyingParty {
        var rp = try SpecVectorTests.relyingParty(allowCrossOrigin: false, topOrigins: nil)
        rp.trustAnchors = []
        let service = try TestMetadataService()
        rp.metadata = try await MetadataBLOB.verify(
            jws: try service.blob(number: 1, nextUpdate: "2027-02-01", entries: entries),
            roots: [service.root],
            at: MetadataBLOBTests.now
        )
        return rp
    }

    /// What the vector's registration says without metadata (its AAGUID and attestation certificate).
    static func plain(_ name: String) async throws -> VerifiedRegistration {
        try await AttestationFormatTests.verify(try AttestationFormatTests.vector(name))
    }

    @Test(arguments: ["PackedES256WithMDS", "TPMES256"])
    func theModelsRootsFromMetadataAreTrustAnchors(name: String) async throws {
        let plain = try await Self.plain(name)
        #expect(plain.aaguidString != MetadataEntry.zeroAAGUID)
        let rp = try await Self.relyingParty([
            try TestMetadataService.entry(aaguid: plain.aaguidString, description: "Vector key", roots: [try Self.vectorRoot])
        ])
        let result = try await AttestationFormatTests.verify(try AttestationFormatTests.vector(name), rp: rp)
        #expect(result.attestationTrusted)
        #expect(result.metadata?.description == "Vector key")
        // The model listed with another root: the attestation claims a model whose roots it does not reach.
        let impostor = try await Self.relyingParty([
            try TestMetadataService.entry(aaguid: plain.aaguidString, description: "Vector key", roots: [try TestAttestationCA().certificate])
        ])
        await #expect(throws: WebAuthnError(.untrustedAttestation, "")) {
            try await AttestationFormatTests.verify(try AttestationFormatTests.vector(name), rp: impostor)
        }
    }

    @Test func u2fAuthenticatorsAreFoundByAttestationKeyIdentifier() async throws {
        let plain = try await Self.plain("FIDOU2FES256")
        let identifier = try #require(plain.attestationKeyIdentifier)
        #expect(identifier.count == 40)
        let rp = try await Self.relyingParty([
            try TestMetadataService.entry(keyIdentifiers: [identifier.uppercased()], description: "Vector U2F", roots: [try Self.vectorRoot])
        ])
        let result = try await AttestationFormatTests.verify(try AttestationFormatTests.vector("FIDOU2FES256"), rp: rp)
        #expect(result.attestationTrusted)
        #expect(result.metadata?.description == "Vector U2F")
        // The key identifier is the SHA-1 of the key's bytes, here the uncompressed P-256 point.
        let leaf = try #require(plain.trustPath.first)
        let key = try #require(P256.Signing.PublicKey(leaf.publicKey))
        #expect(identifier == Hex.encode(Insecure.SHA1.hash(data: key.x963Representation)))
    }

    @Test(arguments: ["REVOKED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE"])
    func compromisedModelsAreRefused(status: String) async throws {
        let plain = try await Self.plain("PackedES256WithMDS")
        let rp = try await Self.relyingParty([
            try TestMetadataService.entry(
                aaguid: plain.aaguidString,
                description: "Vector key",
                roots: [try Self.vectorRoot],
                statuses: [("FIDO_CERTIFIED_L1", "2020-01-01"), (status, "2024-05-01")]
            )
        ])
        let vector = try AttestationFormatTests.vector("PackedES256WithMDS")
        await #expect(throws: WebAuthnError(.authenticatorStatusRefused, "")) { try await AttestationFormatTests.verify(vector, rp: rp) }
        // A policy that refuses nothing reports it only.
        var lenient = rp
        lenient.refusedStatuses = []
        #expect(try await AttestationFormatTests.verify(vector, rp: lenient).metadata?.status?.rawValue == status)
    }

    @Test func aStatusAboutOneAttestationCertificateAppliesOnlyToIt() async throws {
        let plain = try await Self.plain("PackedES256WithMDS")
        let leaf = try #require(plain.trustPath.first)
        let vector = try AttestationFormatTests.vector("PackedES256WithMDS")
        let other = try await Self.relyingParty([
            try TestMetadataService.entry(
                aaguid: plain.aaguidString,
                description: "Vector key",
                roots: [try Self.vectorRoot],
                statuses: [("FIDO_CERTIFIED_L1", "2020-01-01"), ("ATTESTATION_KEY_COMPROMISE", "2024-05-01")],
                reportCertificate: try TestAttestationCA().certificate
            )
        ])
        #expect(try await AttestationFormatTests.verify(vector, rp: other).attestationTrusted)
        let this = try await Self.relyingParty([
            try TestMetadataService.entry(
                aaguid: plain.aaguidString,
                description: "Vector key",
                roots: [try Self.vectorRoot],
                statuses: [("FIDO_CERTIFIED_L1", "2020-01-01"), ("ATTESTATION_KEY_COMPROMISE", "2024-05-01")],
                reportCertificate: leaf
            )
        ])
        await #expect(throws: WebAuthnError(.authenticatorStatusRefused, "")) { try await AttestationFormatTests.verify(vector, rp: this) }
    }

    @Test func certifiedOnlyNeedsACertifiedModelAndTrustedAttestation() async throws {
        let plain = try await Self.plain("PackedES256WithMDS")
        let vector = try AttestationFormatTests.vector("PackedES256WithMDS")
        func party(_ entries: [[String: any Sendable]]) async throws -> RelyingParty {
            var rp = try await Self.relyingParty(entries)
            rp.requireCertifiedAuthenticators = true
            return rp
        }
        // Certified, attestation to its roots: accepted.
        let certified = try await party([
            try TestMetadataService.entry(aaguid: plain.aaguidString, description: "Vector key", roots: [try Self.vectorRoot])
        ])
        #expect(try await AttestationFormatTests.verify(vector, rp: certified).attestationTrusted)
        // Not in the metadata.
        await #expect(throws: WebAuthnError(.uncertifiedAuthenticator, "")) {
            try await AttestationFormatTests.verify(vector, rp: try await party([]))
        }
        // Listed, not certified.
        let uncertified = try await party([
            try TestMetadataService.entry(
                aaguid: plain.aaguidString,
                description: "Vector key",
                roots: [try Self.vectorRoot],
                statuses: [("NOT_FIDO_CERTIFIED", "2020-01-01")]
            )
        ])
        await #expect(throws: WebAuthnError(.uncertifiedAuthenticator, "")) { try await AttestationFormatTests.verify(vector, rp: uncertified) }
        // Certified, but the metadata lists no roots (and none are configured): the attestation is not trusted.
        let rootless = try await party([try TestMetadataService.entry(aaguid: plain.aaguidString, description: "Vector key")])
        await #expect(throws: WebAuthnError(.uncertifiedAuthenticator, "")) { try await AttestationFormatTests.verify(vector, rp: rootless) }
        // A none attestation never qualifies.
        await #expect(throws: WebAuthnError(.uncertifiedAuthenticator, "")) {
            try await AttestationFormatTests.verify(try AttestationFormatTests.vector("NoneES256"), rp: certified)
        }
    }
}
