import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import TouchstoneWebAuthn

/// Apple anonymous attestation with certificates made in the test.
struct AppleAttestationTests {
    static let rpId = "example.org"
    static let origin = "https://example.org"
    static let challenge: [UInt8] = Array(repeating: 6, count: 32)

    enum Variant { case valid, otherKey, noExtension, otherNonce }

    static func registration(_ variant: Variant) throws -> (clientData: [UInt8], object: [UInt8]) {
        let made = VirtualAuthenticator().register(rpId: rpId, origin: origin, challenge: challenge, userHandle: [1])
        let map = try #require(try CBORDecoder().decode(made.credential.publicKeyCOSE).mapValue)
        let point = [0x04] + (try #require(map[int: -2]?.bytesValue)) + (try #require(map[int: -3]?.bytesValue))
        let credentialKey = try P256.Signing.PublicKey(x963Representation: point)
        var nonce = Array(SHA256.hash(data: made.authenticatorData + Array(SHA256.hash(data: made.clientDataJSON))))
        if variant == .otherNonce { nonce[0] ^= 1 }
        var extensions = Certificate.Extensions()
        if variant != .noExtension {
            // SEQUENCE { [1] EXPLICIT OCTET STRING nonce }
            let value: [UInt8] = [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce
            try extensions.append(Certificate.Extension(oid: AttestationOID.appleNonce, critical: false, value: value[...]))
        }
        let issuerKey = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Apple WebAuthn test") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(variant == .otherKey ? P256.Signing.PrivateKey().publicKey : credentialKey),
            notValidBefore: Date().addingTimeInterval(-60), notValidAfter: Date().addingTimeInterval(3600), issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(issuerKey))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let statement: CBORMap = [.text("x5c"): .array([.bytes(serializer.serializedBytes)])]
        let object = CBOREncoder.encode(
            .map([.text("fmt"): .text("apple"), .text("attStmt"): .map(statement), .text("authData"): .bytes(made.authenticatorData)]))
        return (made.clientDataJSON, object)
    }

    static func verify(_ variant: Variant) async throws -> VerifiedRegistration {
        let made = try Self.registration(variant)
        let rp = RelyingParty(id: rpId, name: "Example", origins: [origin])
        return try await rp.verifyRegistration(clientDataJSON: made.clientData, attestationObject: made.object, challenge: challenge)
    }

    @Test func aMatchingCertificateIsAnonCA() async throws {
        #expect(try await Self.verify(.valid).attestationType == .anonCA)
    }

    @Test(arguments: [
        (Variant.otherKey, "the credential key is not the certificate's key"),
        (.noExtension, "the Apple nonce extension is missing or malformed"),
        (.otherNonce, "the Apple nonce does not match"),
    ])
    func eachCheckRefusesItsCase(variant: Variant, reason: String) async throws {
        do {
            _ = try await Self.verify(variant)
            Issue.record("expected: \(reason)")
        } catch let error as WebAuthnError {
            #expect(error.reason == reason)
        }
    }
}
