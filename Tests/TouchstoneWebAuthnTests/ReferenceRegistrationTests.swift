import Foundation
import Testing
import TouchstoneCrypto
import TouchstoneTesting

@testable import TouchstoneWebAuthn

/// Registrations made by real authenticators, from the test suites of two reference relying-party libraries
/// (Fixtures/reference-registrations.json names each source): the reference result, then tampered variants that must
/// fail at the step that was tampered with.
struct ReferenceRegistrationTests {
    struct Fixture: Decodable, Sendable, CustomTestStringConvertible {
        struct Credential: Decodable, Sendable {
            struct Response: Decodable, Sendable {
                var clientDataJSON: String
                var attestationObject: String
            }
            var id: String
            var rawId: String
            var response: Response
        }
        struct Expectation: Decodable, Sendable {
            var accepted: Bool
            var error: String?
            var fmt: String?
            var attestationType: String?
            var aaguid: String?
            var algorithm: String?
        }
        var name: String
        var source: String
        var rpId: String
        var origin: String
        var challenge: String
        var at: String?
        var credential: Credential
        var expect: Expectation

        var testDescription: String { self.name }

        /// The time the reference test fakes (certificates valid), else now.
        var time: Date {
            self.at.flatMap { try? Date($0, strategy: .iso8601) } ?? Date()
        }

        var relyingParty: RelyingParty {
            var rp = RelyingParty(id: self.rpId, name: "Reference", origins: [self.origin])
            rp.algorithms = COSEAlgorithm.allCases
            rp.userVerification = .discouraged
            return rp
        }

        func verify(
            with party: RelyingParty? = nil,
            clientDataJSON: [UInt8]? = nil,
            attestationObject: [UInt8]? = nil
        ) async throws -> VerifiedRegistration {
            try await (party ?? self.relyingParty).verifyRegistration(
                clientDataJSON: try clientDataJSON ?? #require(Base64.decode(self.credential.response.clientDataJSON)),
                attestationObject: try attestationObject ?? #require(Base64.decode(self.credential.response.attestationObject)),
                challenge: try #require(Base64.decode(self.challenge)),
                at: self.time
            )
        }
    }

    static let fixtures: [Fixture] = {
        struct Document: Decodable { var registrations: [Fixture] }
        let url = Bundle.module.url(forResource: "reference-registrations", withExtension: "json", subdirectory: "Fixtures")!
        return try! JSONDecoder().decode(Document.self, from: Data(contentsOf: url)).registrations
    }()

    @Test func theFixturesCoverEveryFormat() {
        let formats = Set(Self.fixtures.compactMap(\.expect.fmt))
        #expect(formats == ["none", "packed", "fido-u2f", "tpm", "android-key", "apple"])
        #expect(Self.fixtures.count >= 30)
    }

    @Test(arguments: fixtures)
    func theReferenceResult(_ fixture: Fixture) async throws {
        if fixture.expect.accepted {
            let result = try await fixture.verify()
            #expect(result.format == fixture.expect.fmt)
            #expect(result.attestationType.rawValue == fixture.expect.attestationType)
            #expect(result.aaguidString == fixture.expect.aaguid)
            #expect(result.algorithm.name == fixture.expect.algorithm)
            #expect(!result.attestationTrusted)  // no trust anchors configured
            #expect(try Base64.decode(fixture.credential.rawId) == result.credentialId)
        } else {
            let code = try #require(fixture.expect.error.flatMap(WebAuthnError.Code.init(rawValue:)))
            await #expect(throws: WebAuthnError(code, "")) { try await fixture.verify() }
        }
    }

    /// The statement's signature with one bit flipped: the statement no longer verifies.
    @Test(arguments: fixtures.filter { $0.expect.accepted && $0.expect.fmt != "none" && $0.expect.fmt != "apple" })
    func aTamperedSignatureFails(_ fixture: Fixture) async throws {
        let object = try Self.attestationObject(fixture) { statement in
            guard var signature = statement[text: "sig"]?.bytesValue else { return }
            signature[signature.count / 2] ^= 0x01
            statement.set(.text("sig"), .bytes(signature))
        }
        await #expect(throws: WebAuthnError.self) { try await fixture.verify(attestationObject: object) }
        do {
            _ = try await fixture.verify(attestationObject: object)
        } catch let error as WebAuthnError {
            #expect([.invalidSignature, .invalidAttestation].contains(error.code), "\(error)")
        }
    }

    /// Client data with one more member: same challenge and origin, another hash, so what was signed differs.
    @Test(arguments: fixtures.filter { $0.expect.accepted && $0.expect.fmt != "none" })
    func tamperedClientDataFails(_ fixture: Fixture) async throws {
        var json = try #require(Base64.decode(fixture.credential.response.clientDataJSON))
        let end = try #require(json.lastIndex(of: UInt8(ascii: "}")))
        json.replaceSubrange(end...end, with: Array(#","tampered":true}"#.utf8))
        do {
            _ = try await fixture.verify(clientDataJSON: json)
            Issue.record("accepted tampered client data")
        } catch let error as WebAuthnError {
            #expect([.invalidSignature, .invalidAttestation].contains(error.code), "\(error)")
        }
    }

    /// Another challenge, origin or RP ID than the ceremony's: refused at that step, whatever the format.
    @Test(arguments: fixtures.filter(\.expect.accepted))
    func theCeremonyIsBoundToItsChallengeOriginAndRPID(_ fixture: Fixture) async throws {
        await #expect(throws: WebAuthnError(.challengeMismatch, "")) {
            try await fixture.relyingParty.verifyRegistration(
                clientDataJSON: try #require(Base64.decode(fixture.credential.response.clientDataJSON)),
                attestationObject: try #require(Base64.decode(fixture.credential.response.attestationObject)),
                challenge: Array("another challenge".utf8),
                at: fixture.time
            )
        }
        var elsewhere = fixture.relyingParty
        elsewhere.origins = ["https://elsewhere.example"]
        await #expect(throws: WebAuthnError(.originNotAllowed, "")) { try await fixture.verify(with: elsewhere) }
        var otherRP = fixture.relyingParty
        otherRP.id = "elsewhere.example"
        await #expect(throws: WebAuthnError(.rpIdMismatch, "")) { try await fixture.verify(with: otherRP) }
    }

    /// With trust anchors configured, a certificate chain that reaches none of them fails.
    @Test(arguments: fixtures.filter { $0.expect.accepted && $0.expect.attestationType != "none" && $0.expect.attestationType != "self" })
    func aChainToNoConfiguredRootFails(_ fixture: Fixture) async throws {
        var anchored = fixture.relyingParty
        anchored.trustAnchors = [try TestAttestationCA().certificate]
        await #expect(throws: WebAuthnError(.untrustedAttestation, "")) { try await fixture.verify(with: anchored) }
    }

    static func attestationObject(_ fixture: Fixture, _ change: (inout CBORMap) -> Void) throws -> [UInt8] {
        let bytes = try #require(Base64.decode(fixture.credential.response.attestationObject))
        var object = try #require(try CBORDecoder().decode(bytes).mapValue)
        var statement = try #require(object[text: "attStmt"]?.mapValue)
        change(&statement)
        object.set(.text("attStmt"), .map(statement))
        return CBOREncoder.encode(.map(object))
    }
}
