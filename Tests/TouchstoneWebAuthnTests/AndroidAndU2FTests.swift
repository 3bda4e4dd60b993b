import Crypto
import Foundation
import SwiftASN1
import Testing
import TouchstoneCrypto
import X509

@testable import TouchstoneWebAuthn

/// android-key and fido-u2f checks, with certificates made in the test.
struct AndroidAndU2FTests {
    static let rpId = "example.org"
    static let origin = "https://example.org"
    static let challenge: [UInt8] = Array(repeating: 3, count: 32)

    static func der(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        if content.count < 0x80 { out.append(UInt8(content.count)) } else { out += [0x81, UInt8(content.count)] }
        return out + content
    }

    /// A context-specific explicit tag with a (possibly multi-byte) tag number.
    static func explicit(_ number: Int, _ inner: [UInt8]) -> [UInt8] {
        let identifier: [UInt8] = number < 31 ? [0xA0 | UInt8(number)] : [0xBF] + (number >= 128 ? [0x80 | UInt8(number >> 7), UInt8(number & 0x7F)] : [UInt8(number)])
        var out = identifier
        out.append(UInt8(inner.count))
        return out + inner
    }

    /// An AuthorizationList with the given purpose, origin and allApplications entries.
    static func authorizationList(purpose: Int?, origin: Int?, allApplications: Bool = false) -> [UInt8] {
        var entries: [UInt8] = []
        if let purpose { entries += explicit(1, der(0x31, der(0x02, [UInt8(purpose)]))) }
        if allApplications { entries += explicit(600, [0x05, 0x00]) }
        if let origin { entries += explicit(702, der(0x02, [UInt8(origin)])) }
        return der(0x30, entries)
    }

    static func keyDescription(challenge: [UInt8], tee: [UInt8], software: [UInt8] = der(0x30, [])) -> [UInt8] {
        der(0x30, der(0x02, [3]) + der(0x0A, [1]) + der(0x02, [4]) + der(0x0A, [1]) + der(0x04, challenge) + der(0x04, []) + software + tee)
    }

    static func certificate(for key: P256.Signing.PublicKey, extensions: [Certificate.Extension] = []) throws -> [UInt8] {
        let issuerKey = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Android Keystore test") }
        var all = Certificate.Extensions()
        for item in extensions { try all.append(item) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key), notValidBefore: Date().addingTimeInterval(-60),
            notValidAfter: Date().addingTimeInterval(3600), issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: all, issuerPrivateKey: .init(issuerKey))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// A registration whose android-key statement is signed by the credential key itself (as Android's keystore
    /// attests the credential key), with a certificate carrying `description`.
    static func androidRegistration(
        description: (_ clientDataHash: [UInt8]) -> [UInt8],
        certificateKey: P256.Signing.PublicKey? = nil
    ) throws -> (clientData: [UInt8], object: [UInt8]) {
        let made = VirtualAuthenticator().register(rpId: rpId, origin: origin, challenge: challenge, userHandle: [1])
        let hash = Array(SHA256.hash(data: made.clientDataJSON))
        let credentialKey = try P256.Signing.PrivateKey(rawRepresentation: try Self.privateKey(made.credential))
        let extensionValue = Certificate.Extension(oid: KeyDescription.oid, critical: false, value: description(hash)[...])
        let certificate = try Self.certificate(for: certificateKey ?? credentialKey.publicKey, extensions: [extensionValue])
        let signature = try credentialKey.signature(for: made.authenticatorData + hash).derRepresentation
        let statement: CBORMap = [.text("alg"): .int(-7), .text("sig"): .bytes(Array(signature)), .text("x5c"): .array([.bytes(certificate)])]
        let object = CBOREncoder.encode(.map([.text("fmt"): .text("android-key"), .text("attStmt"): .map(statement), .text("authData"): .bytes(made.authenticatorData)]))
        return (made.clientDataJSON, object)
    }

    static func privateKey(_ credential: VirtualAuthenticator.Credential) throws -> [UInt8] {
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(credential)) as? [String: Any]
        return try #require((encoded?["privateKey"] as? String).flatMap { Base64.decode($0) })
    }

    /// Expects `body` to fail with exactly this reason (error equality compares codes only).
    static func expectFailure(_ reason: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected a failure: \(reason)")
        } catch let error as WebAuthnError {
            #expect(error.reason == reason)
        } catch {
            Issue.record("unexpected error: \(error)")
        }
    }

    static func verify(_ made: (clientData: [UInt8], object: [UInt8])) async throws -> VerifiedRegistration {
        let rp = RelyingParty(id: rpId, name: "Example", origins: [origin])
        return try await rp.verifyRegistration(clientDataJSON: made.clientData, attestationObject: made.object, challenge: challenge)
    }

    @Test func aKeystoreGeneratedSigningKeyIsBasicAttestation() async throws {
        let made = try Self.androidRegistration { Self.keyDescription(challenge: $0, tee: Self.authorizationList(purpose: 2, origin: 0)) }
        let result = try await Self.verify(made)
        #expect(result.format == "android-key")
        #expect(result.attestationType == .basic)
    }

    @Test func theAttestationChallengeMustBeTheClientDataHash() async throws {
        let made = try Self.androidRegistration { _ in Self.keyDescription(challenge: [UInt8](repeating: 0, count: 32), tee: Self.authorizationList(purpose: 2, origin: 0)) }
        await Self.expectFailure("attestationChallenge is not the client data hash") { _ = try await Self.verify(made) }
    }

    @Test func keysForAllApplicationsAreRefused() async throws {
        let made = try Self.androidRegistration {
            Self.keyDescription(challenge: $0, tee: Self.authorizationList(purpose: 2, origin: 0, allApplications: true))
        }
        await Self.expectFailure("the key is usable by all applications") { _ = try await Self.verify(made) }
    }

    @Test func importedOrNonSigningKeysAreRefused() async throws {
        let imported = try Self.androidRegistration { Self.keyDescription(challenge: $0, tee: Self.authorizationList(purpose: 2, origin: 2)) }
        await Self.expectFailure("the key was not generated in the keystore for signing") { _ = try await Self.verify(imported) }
        let encrypting = try Self.androidRegistration { Self.keyDescription(challenge: $0, tee: Self.authorizationList(purpose: 0, origin: 0)) }
        await Self.expectFailure("the key was not generated in the keystore for signing") { _ = try await Self.verify(encrypting) }
        // Software-enforced values count when the TEE list is silent.
        let software = try Self.androidRegistration {
            Self.keyDescription(challenge: $0, tee: Self.der(0x30, []), software: Self.authorizationList(purpose: 2, origin: 0))
        }
        #expect(try await Self.verify(software).attestationType == .basic)
    }

    @Test func theCertificateKeyMustBeTheCredentialKey() async throws {
        // The statement is signed by the credential key but the certificate names another key: the signature check
        // (made with the certificate's key) fails first.
        let made = try Self.androidRegistration(
            description: { Self.keyDescription(challenge: $0, tee: Self.authorizationList(purpose: 2, origin: 0)) },
            certificateKey: P256.Signing.PrivateKey().publicKey
        )
        await #expect(throws: WebAuthnError(.invalidSignature, "")) { _ = try await Self.verify(made) }
        #expect(!AndroidKeyAttestation.sameKey(
            Certificate.PublicKey(P256.Signing.PrivateKey().publicKey),
            try COSEKey(bytes: VirtualAuthenticator().register(rpId: Self.rpId, origin: Self.origin, challenge: Self.challenge, userHandle: [1]).credential.publicKeyCOSE)
        ))
    }

    @Test func aMissingKeyDescriptionIsRefused() async throws {
        let made = VirtualAuthenticator().register(rpId: Self.rpId, origin: Self.origin, challenge: Self.challenge, userHandle: [1])
        let hash = Array(SHA256.hash(data: made.clientDataJSON))
        let key = try P256.Signing.PrivateKey(rawRepresentation: try Self.privateKey(made.credential))
        let statement: CBORMap = [
            .text("alg"): .int(-7), .text("sig"): .bytes(Array(try key.signature(for: made.authenticatorData + hash).derRepresentation)),
            .text("x5c"): .array([.bytes(try Self.certificate(for: key.publicKey))]),
        ]
        let object = CBOREncoder.encode(.map([.text("fmt"): .text("android-key"), .text("attStmt"): .map(statement), .text("authData"): .bytes(made.authenticatorData)]))
        await Self.expectFailure("the Android key description extension is missing") {
            _ = try await Self.verify((made.clientDataJSON, object))
        }
    }

    // MARK: fido-u2f

    @Test func fidoU2FNeedsExactlyOneP256Certificate() async throws {
        let vector = try AttestationFormatTests.vector("FIDOU2FES256")
        let twoCertificates = try AttestationFormatTests.withStatement(vector) { statement in
            let first = statement[text: "x5c"]?.arrayValue?.first ?? .null
            statement.set(.text("x5c"), .array([first, first]))
        }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await AttestationFormatTests.verify(vector, attestationObject: twoCertificates) }
        let p384 = try Self.certificateP384()
        let wrongCurve = try AttestationFormatTests.withStatement(vector) { $0.set(.text("x5c"), .array([.bytes(p384)])) }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await AttestationFormatTests.verify(vector, attestationObject: wrongCurve) }
    }

    static func certificateP384() throws -> [UInt8] {
        let key = P384.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("P-384") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: Date().addingTimeInterval(-60),
            notValidAfter: Date().addingTimeInterval(3600), issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: Certificate.Extensions(), issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
