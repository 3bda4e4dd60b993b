import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import TouchstoneWebAuthn

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
        let otherRoot = try! TestPKI().root
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

    /// A root and a leaf certifying `key`, with the App Attest nonce extension.
    struct TestPKI {
        let rootKey = P256.Signing.PrivateKey()
        let root: Certificate

        init() throws {
            let name = try DistinguishedName { CommonName("App Attest test root") }
            self.root = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(self.rootKey.publicKey),
                notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
                issuerPrivateKey: .init(self.rootKey))
        }

        func leaf(for key: P256.Signing.PublicKey, nonce: [UInt8]) throws -> [UInt8] {
            var extensions = Certificate.Extensions()
            let value: [UInt8] = [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce  // SEQUENCE { [1] { OCTET STRING } }
            try extensions.append(Certificate.Extension(oid: AttestationOID.appleNonce, critical: false, value: value[...]))
            let leaf = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key),
                notValidBefore: Date().addingTimeInterval(-60), notValidAfter: Date().addingTimeInterval(3600),
                issuer: self.root.subject, subject: try DistinguishedName { CommonName("App Attest test key") },
                signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(self.rootKey))
            var serializer = DER.Serializer()
            try serializer.serialize(leaf)
            return serializer.serializedBytes
        }
    }

    static let appId = "ABCDE12345.com.example.touchstone"

    static func authenticatorData(appId: String = appId, counter: UInt32, aaguid: [UInt8]? = nil, credentialId: [UInt8]? = nil)
        -> [UInt8]
    {
        var bytes = Array(SHA256.hash(data: Array(appId.utf8)))
        bytes.append(aaguid == nil ? 0x00 : 0x40)
        bytes += withUnsafeBytes(of: counter.bigEndian, Array.init)
        if let aaguid, let credentialId {
            bytes += aaguid + [UInt8(credentialId.count >> 8), UInt8(credentialId.count & 0xFF)] + credentialId
        }
        return bytes
    }

    /// An attestation by a key made in the test, certified by `pki`, with one field changed as asked.
    static func madeAttestation(pki: TestPKI, key: P256.Signing.PrivateKey, clientDataHash: [UInt8], counter: UInt32 = 0, otherCredentialId: Bool = false)
        throws -> (object: [UInt8], keyId: [UInt8])
    {
        let keyId = Array(SHA256.hash(data: key.publicKey.x963Representation))
        let authData = Self.authenticatorData(
            counter: counter, aaguid: AppAttestVerifier.Environment.development.aaguid,
            credentialId: otherCredentialId ? Array(keyId.reversed()) : keyId)
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        let statement: CBORMap = [.text("x5c"): .array([.bytes(try pki.leaf(for: key.publicKey, nonce: nonce))]), .text("receipt"): .bytes([1, 2, 3])]
        let object = CBOREncoder.encode(
            .map([.text("fmt"): .text("apple-appattest"), .text("attStmt"): .map(statement), .text("authData"): .bytes(authData)]))
        return (object, keyId)
    }

    @Test func aMadeAttestationVerifiesAndEachLaterStepFailsAlone() async throws {
        let pki = try TestPKI()
        let verifier = AppAttestVerifier(appIds: [Self.appId], environment: .development, trustAnchors: [pki.root])
        let key = P256.Signing.PrivateKey()
        let hash = Array(SHA256.hash(data: Array("challenge".utf8)))
        let valid = try Self.madeAttestation(pki: pki, key: key, clientDataHash: hash)
        let attested = try await verifier.verifyAttestation(valid.object, keyId: valid.keyId, clientDataHash: hash, at: Date())
        #expect(attested.publicKey == Array(key.publicKey.x963Representation))
        #expect(attested.receipt == [1, 2, 3])

        let counted = try Self.madeAttestation(pki: pki, key: key, clientDataHash: hash, counter: 1)
        await Self.expectFailure(.counterNotZero) {
            _ = try await verifier.verifyAttestation(counted.object, keyId: counted.keyId, clientDataHash: hash, at: Date())
        }
        let otherId = try Self.madeAttestation(pki: pki, key: key, clientDataHash: hash, otherCredentialId: true)
        await Self.expectFailure(.keyIdMismatch) {
            _ = try await verifier.verifyAttestation(otherId.object, keyId: otherId.keyId, clientDataHash: hash, at: Date())
        }
    }

    // MARK: Assertions

    static func assertion(key: P256.Signing.PrivateKey, clientData: [UInt8], counter: UInt32, appId: String = appId) throws -> [UInt8] {
        let authData = Self.authenticatorData(appId: appId, counter: counter)
        let nonce = Array(SHA256.hash(data: authData + Array(SHA256.hash(data: clientData))))
        let signature = try key.signature(for: nonce)
        return CBOREncoder.encode(
            .map([.text("signature"): .bytes(Array(signature.derRepresentation)), .text("authenticatorData"): .bytes(authData)]))
    }

    @Test func assertionsVerifyOnceTheirCounterGrows() throws {
        let verifier = AppAttestVerifier(appIds: [Self.appId], environment: .production)
        let key = P256.Signing.PrivateKey()
        let publicKey = Array(key.publicKey.x963Representation)
        let request = Array(#"{"action":"enable"}"#.utf8)
        let assertion = try Self.assertion(key: key, clientData: request, counter: 3)
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
        let otherApp = try Self.assertion(key: key, clientData: request, counter: 9, appId: "ABCDE12345.com.example.evil")
        #expect(failure { _ = try verifier.verifyAssertion(otherApp, clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 0) } == .appIdMismatch)
        #expect(failure { _ = try verifier.verifyAssertion([0x01], clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 0) } == .malformed)
        let short = CBOREncoder.encode(.map([.text("signature"): .bytes([1]), .text("authenticatorData"): .bytes([1, 2])]))
        #expect(failure { _ = try verifier.verifyAssertion(short, clientData: request, publicKey: publicKey, appId: Self.appId, previousCounter: 0) } == .malformed)
    }
}
