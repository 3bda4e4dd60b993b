import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import TouchstoneWebAuthn
import TouchstoneTesting

/// App Attest: Apple's published attestation, and one failure per verification step.
struct AppAttestTests {
    struct Guide: Decodable {
        var appId: String
        var keyId: String
        var clientDataHashUTF8: String
        var verifyAt: String
        var attestation: String
    }

    static let guide: Guide = {
        let url = Bundle.module.url(forResource: "Fixtures/apple-app-attest-guide", withExtension: "json")!
        return try! JSONDecoder().decode(Guide.self, from: Data(contentsOf: url))
    }()

    static var attestation: [UInt8] { [UInt8](Data(base64Encoded: guide.attestation)!) }
    static var keyId: [UInt8] { [UInt8](Data(base64Encoded: guide.keyId)!) }
    static var clientDataHash: [UInt8] { Array(guide.clientDataHashUTF8.utf8) }
    static var verifyAt: Date { ISO8601DateFormatter().date(from: guide.verifyAt)! }

    static func expectFailure(_ code: AppAttestError.Code, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code.rawValue)")
        } catch let error as AppAttestError {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    // MARK: Apple's sample

    @Test func theAppleRootParses() {
        #expect(AppAttestVerifier.appleRoots.count == 1)
        #expect(AppAttestVerifier.appleRoots.first?.subject.description.contains("Apple App Attestation Root CA") == true)
    }

    @Test func applesPublishedAttestationVerifiesAtItsDate() async throws {
        let verifier = AppAttestVerifier(appIds: ["OTHERTEAM1.com.example.other", Self.guide.appId], environment: .production)
        let key = try await verifier.verifyAttestation(Self.attestation, keyId: Self.keyId, clientDataHash: Self.clientDataHash, at: Self.verifyAt)
        #expect(key.keyId == Self.keyId)
        #expect(key.publicKey.count == 65)
        #expect(Array(SHA256.hash(data: key.publicKey)) == Self.keyId)
        #expect(key.appId == Self.guide.appId)
        #expect(key.environment == .production)
        #expect(key.receipt.count > 1000)
    }

    @Test func applesAttestationFailsEachChangedInput() async {
        let verifier = AppAttestVerifier(appIds: [Self.guide.appId], environment: .production)
        let attestation = Self.attestation, keyId = Self.keyId, hash = Self.clientDataHash, at = Self.verifyAt
        // After the credential certificate expired.
        await Self.expectFailure(.untrustedCertificate) {
            _ = try await verifier.verifyAttestation(attestation, keyId: keyId, clientDataHash: hash, at: at.addingTimeInterval(7 * 86400))
        }
        // Against another root.
        let otherRoot = try! TestAppAttestDevice(appId: Self.guide.appId).root
        await Self.expectFailure(.untrustedCertificate) {
            _ = try await AppAttestVerifier(appIds: [Self.guide.appId], environment: .production, trustAnchors: [otherRoot])
                .verifyAttestation(attestation, keyId: keyId, clientDataHash: hash, at: at)
        }
        // Another challenge (here: the hash of the sample's challenge instead of its raw bytes).
        await Self.expectFailure(.nonceMismatch) {
            _ = try await verifier.verifyAttestation(attestation, keyId: keyId, clientDataHash: Array(SHA256.hash(data: hash)), at: at)
        }
        await Self.expectFailure(.keyIdMismatch) {
            _ = try await verifier.verifyAttestation(attestation, keyId: Array(repeating: 7, count: 32), clientDataHash: hash, at: at)
        }
        await Self.expectFailure(.appIdMismatch) {
            _ = try await AppAttestVerifier(appIds: ["1234567890.com.example.other"], environment: .production)
                .verifyAttestation(attestation, keyId: keyId, clientDataHash: hash, at: at)
        }
        await Self.expectFailure(.environmentMismatch) {
            _ = try await AppAttestVerifier(appIds: [Self.guide.appId], environment: .development)
                .verifyAttestation(attestation, keyId: keyId, clientDataHash: hash, at: at)
        }
        await Self.expectFailure(.malformed) {
            _ = try await verifier.verifyAttestation(Array(attestation.dropLast(40)), keyId: keyId, clientDataHash: hash, at: at)
        }
        await Self.expectFailure(.malformed) {
            _ = try await verifier.verifyAttestation([0xA0], keyId: keyId, clientDataHash: hash, at: at)
        }
    }

    // MARK: Attestations made in the test

    static let appId = "ABCDE12345.com.example.touchstone"

    @Test func aMadeAttestationVerifiesAndEachLaterStepFailsAlone() async throws {
        let device = try TestAppAttestDevice(appId: Self.appId)
        let verifier = AppAttestVerifier(appIds: [Self.appId], environment: .development, trustAnchors: [device.root])
        let key = P256.Signing.PrivateKey()
        let keyId = TestAppAttestDevice.keyId(of: key)
        let hash = Array(SHA256.hash(data: Array("challenge".utf8)))
        let attested = try await verifier.verifyAttestation(try device.attest(key, clientDataHash: hash), keyId: keyId, clientDataHash: hash, at: Date())
        #expect(attested.publicKey == Array(key.publicKey.x963Representation))
        #expect(attested.receipt == [1, 2, 3])

        let counted = try device.attest(key, clientDataHash: hash, counter: 1)
        await Self.expectFailure(.counterNotZero) {
            _ = try await verifier.verifyAttestation(counted, keyId: keyId, clientDataHash: hash, at: Date())
        }
        let otherId = try device.attest(key, clientDataHash: hash, credentialId: Array(keyId.reversed()))
        await Self.expectFailure(.keyIdMismatch) {
            _ = try await verifier.verifyAttestation(otherId, keyId: keyId, clientDataHash: hash, at: Date())
        }
    }

    // MARK: Assertions

    @Test func assertionsVerifyOnceTheirCounterGrows() throws {
        let verifier = AppAttestVerifier(appIds: [Self.appId], environment: .production)
        let device = try TestAppAttestDevice(appId: Self.appId)
        let key = P256.Signing.PrivateKey()
        let publicKey = Array(key.publicKey.x963Representation)
        let request = Array(#"{"action":"enable"}"#.utf8)
        let assertion = try device.assert(key, clientData: request, counter: 3)
        #expect(try verifier.verifyAssertion(assertion, clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 2) == 3)

        func failure(_ body: () throws -> Void) -> AppAttestError.Code? {
            do {
                try body()
                return nil
            } catch {
                return (error as? AppAttestError)?.code
            }
        }
        #expect(failure { _ = try verifier.verifyAssertion(assertion, clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 3) } == .counterNotIncreased)
        #expect(failure { _ = try verifier.verifyAssertion(assertion, clientData: Array("other".utf8), publicKey: publicKey, appId: Self.appId, previousCounter: 0) } == .invalidSignature)
        let otherKey = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(failure { _ = try verifier.verifyAssertion(assertion, clientData: request, publicKey: otherKey, appId: Self.appId, previousCounter: 0) } == .invalidSignature)
        let otherApp = try device.assert(key, clientData: request, counter: 9, appId: "ABCDE12345.com.example.evil")
        #expect(failure { _ = try verifier.verifyAssertion(otherApp, clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 0) } == .appIdMismatch)
        #expect(failure { _ = try verifier.verifyAssertion([0x01], clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 0) } == .malformed)
        let short = CBOREncoder.encode(.map([.text("signature"): .bytes([1]), .text("authenticatorData"): .bytes([1, 2])]))
        #expect(failure { _ = try verifier.verifyAssertion(short, clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 0) } == .malformed)
    }
}
