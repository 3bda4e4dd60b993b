import Foundation
import Testing
import TouchstoneCrypto

@testable import TouchstoneWebAuthn

/// Each attestation format's own checks, by tampering with the spec's vectors.
struct AttestationFormatTests {
    typealias Vector = SpecVectorTests.Vectors.Registration

    static func vector(_ name: String) throws -> Vector {
        try #require(SpecVectorTests.vectors.registrations.first { $0.name == name })
    }

    /// The client data with one more member: same challenge and origin, different hash.
    static func extendedClientData(_ vector: Vector) throws -> [UInt8] {
        var json = try #require(Base64.decode(vector.clientDataJSON))
        #expect(json.last == UInt8(ascii: "}"))
        json.removeLast()
        return json + Array(#","tampered":true}"#.utf8)
    }

    static func verify(_ vector: Vector, clientDataJSON: [UInt8]? = nil, attestationObject: [UInt8]? = nil, rp: RelyingParty? = nil)
        async throws -> VerifiedRegistration
    {
        let party = try rp ?? SpecVectorTests.relyingParty(allowCrossOrigin: false, topOrigins: nil)
        return try await party.verifyRegistration(
            clientDataJSON: try clientDataJSON ?? #require(Base64.decode(vector.clientDataJSON)),
            attestationObject: try attestationObject ?? #require(Base64.decode(vector.attestationObject)),
            challenge: try #require(Base64.decode(vector.challenge)),
            at: Date(timeIntervalSince1970: 1_750_000_000)
        )
    }

    /// Rewrites one member of the attestation statement.
    static func withStatement(_ vector: Vector, _ change: (inout CBORMap) -> Void) throws -> [UInt8] {
        let bytes = try #require(Base64.decode(vector.attestationObject))
        var object = try #require(try CBORDecoder().decode(bytes).mapValue)
        var statement = try #require(object[text: "attStmt"]?.mapValue)
        change(&statement)
        object.set(.text("attStmt"), .map(statement))
        return CBOREncoder.encode(.map(object))
    }

    @Test(arguments: [
        ("PackedSelfES256", WebAuthnError.Code.invalidSignature),
        ("PackedES256WithMDS", .invalidSignature),
        ("PackedRS256WithMDS", .invalidSignature),
        ("FIDOU2FES256", .invalidSignature),
        ("AppleAnonymousES256", .invalidAttestation),  // the nonce no longer matches
        ("TPMES256", .invalidAttestation),  // certInfo extraData no longer matches
    ])
    func theStatementIsBoundToTheClientData(name: String, expected: WebAuthnError.Code) async throws {
        let vector = try Self.vector(name)
        await #expect(throws: WebAuthnError(expected, "")) {
            try await Self.verify(vector, clientDataJSON: try Self.extendedClientData(vector))
        }
    }

    @Test(arguments: ["PackedES256WithMDS", "FIDOU2FES256", "AppleAnonymousES256", "TPMES256"])
    func certificatesAreRequired(name: String) async throws {
        let vector = try Self.vector(name)
        let stripped = try Self.withStatement(vector) { $0.set(.text("x5c"), .array([])) }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(vector, attestationObject: stripped) }
        let garbage = try Self.withStatement(vector) { $0.set(.text("x5c"), .array([.bytes([0x30, 0x03, 0x02, 0x01, 0x01])])) }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(vector, attestationObject: garbage) }
    }

    @Test func aSelfAttestationMustUseTheCredentialAlgorithm() async throws {
        let vector = try Self.vector("PackedSelfES256")
        let other = try Self.withStatement(vector) { $0.set(.text("alg"), .int(-8)) }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(vector, attestationObject: other) }
    }

    @Test func tpmVersionAndStructuresAreChecked() async throws {
        let vector = try Self.vector("TPMES256")
        let oldVersion = try Self.withStatement(vector) { $0.set(.text("ver"), .text("1.2")) }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(vector, attestationObject: oldVersion) }
        let truncated = try Self.withStatement(vector) { statement in
            statement.set(.text("certInfo"), .bytes(Array((statement[text: "certInfo"]?.bytesValue ?? []).prefix(20))))
        }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(vector, attestationObject: truncated) }
        let otherKey = try Self.withStatement(vector) { statement in
            var pubArea = statement[text: "pubArea"]?.bytesValue ?? []
            pubArea[pubArea.count - 1] ^= 1  // the last byte of the key's y coordinate
            statement.set(.text("pubArea"), .bytes(pubArea))
        }
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) { try await Self.verify(vector, attestationObject: otherKey) }
    }

    @Test func untrustedChainsAreRefusedWhenBasicAttestationIsRequired() async throws {
        let vector = try Self.vector("PackedES256WithMDS")
        var rp = RelyingParty(id: "example.org", name: "Example", origins: ["https://example.org"])
        rp.minimumAttestation = .basic
        await #expect(throws: WebAuthnError(.untrustedAttestation, "")) { try await Self.verify(vector, rp: rp) }
        // Without the requirement it is accepted, reported untrusted.
        rp.minimumAttestation = .none
        let result = try await Self.verify(vector, rp: rp)
        #expect(result.attestationType == .basic)
        #expect(!result.attestationTrusted)
        // With the anchor, and at a time outside the certificates' validity, the chain is not trusted.
        var anchored = try SpecVectorTests.relyingParty(allowCrossOrigin: false, topOrigins: nil)
        anchored.minimumAttestation = .basic
        await #expect(throws: WebAuthnError(.untrustedAttestation, "")) {
            try await anchored.verifyRegistration(
                clientDataJSON: try #require(Base64.decode(vector.clientDataJSON)),
                attestationObject: try #require(Base64.decode(vector.attestationObject)),
                challenge: try #require(Base64.decode(vector.challenge)),
                at: Date(timeIntervalSince1970: 1_600_000_000)  // 2020, before the certificates' notBefore
            )
        }
    }
}

/// Hostile binary input to the parsers: a typed error, never a trap.
struct HostileInputTests {
    @Test(arguments: [
        [UInt8](),
        [UInt8](repeating: 0, count: 36),
        [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 0],  // AT set, no attested data
        [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0xFF, 0xFF],  // id 65535
        [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0, 4, 1, 2],  // id past end
        [UInt8](repeating: 0, count: 32) + [0x01, 0, 0, 0, 0, 0x00],  // trailing byte
        [UInt8](repeating: 0, count: 32) + [0x81, 0, 0, 0, 0, 0x01],  // ED set, extensions not a map
    ])
    func malformedAuthenticatorData(bytes: [UInt8]) {
        #expect(throws: WebAuthnError(.malformed, "")) { try AuthenticatorData(bytes: bytes) }
    }

    @Test func aCredentialIdOver1023BytesIsRejected() {
        let bytes = [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0x04, 0x00]
            + [UInt8](repeating: 1, count: 1024) + CBOREncoder.encode(.map([.int(1): .int(2)]))
        #expect(throws: WebAuthnError(.malformed, "")) { try AuthenticatorData(bytes: bytes) }
    }

    @Test(arguments: [
        CBOR.map([.int(1): .int(2), .int(3): .int(-7), .int(-1): .int(1), .int(-2): .bytes([1]), .int(-3): .bytes([2])]),  // short coords
        .map([.int(1): .int(2), .int(3): .int(-7), .int(-1): .int(2), .int(-2): .bytes(.init(repeating: 1, count: 32)), .int(-3): .bytes(.init(repeating: 1, count: 32))]),  // wrong curve
        .map([.int(1): .int(2), .int(3): .int(-7), .int(-1): .int(1), .int(-2): .bytes(.init(repeating: 0, count: 32)), .int(-3): .bytes(.init(repeating: 0, count: 32))]),  // not on curve
        .map([.int(1): .int(1), .int(3): .int(-8), .int(-1): .int(6), .int(-2): .bytes([1, 2, 3])]),  // short Ed25519
        .map([.int(1): .int(3), .int(3): .int(-257), .int(-1): .bytes(.init(repeating: 0xC5, count: 128)), .int(-2): .bytes([1, 0, 1])]),  // RSA 1024
        .map([.int(1): .int(2), .int(3): .int(-999)]),  // unknown algorithm
        .map([.int(1): .int(9), .int(3): .int(-7)]),  // unknown key type
        .map([.int(1): .int(1), .int(3): .int(-7)]),  // OKP with ES256
        .array([]),
    ])
    func unusableCOSEKeys(key: CBOR) {
        #expect(throws: WebAuthnError.self) { try COSEKey(key) }
    }

    @Test func theP256IdentityPointIsRejected() {
        // The point at infinity has no affine coordinates; all-zero coordinates are what an attacker can send.
        let key = CBOR.map([
            .int(1): .int(2), .int(3): .int(-7), .int(-1): .int(1), .int(-2): .bytes(.init(repeating: 0, count: 32)),
            .int(-3): .bytes(.init(repeating: 0, count: 32)),
        ])
        #expect(throws: WebAuthnError(.unsupportedKey, "")) { try COSEKey(key) }
    }

    @Test(arguments: [
        [UInt8](Array("not cbor".utf8)),
        CBOREncoder.encode(.map([.text("fmt"): .text("none")])),
        CBOREncoder.encode(.map([.text("fmt"): .int(1), .text("authData"): .bytes([]), .text("attStmt"): .map([:])])),
        [0xBF, 0xFF],  // indefinite map
    ])
    func malformedAttestationObjects(bytes: [UInt8]) async {
        let rp = RelyingParty(id: "example.org", name: "x", origins: ["https://example.org"])
        let clientData = VirtualAuthenticator.clientData(type: "webauthn.create", challenge: [1, 2, 3], origin: "https://example.org")
        await #expect(throws: WebAuthnError(.malformed, "")) {
            try await rp.verifyRegistration(clientDataJSON: clientData, attestationObject: bytes, challenge: [1, 2, 3])
        }
    }
}

struct RelyingPartyHelperTests {
    @Test func trustAnchorsParseFromPEMAndRefuseAnythingElse() throws {
        let der = try #require(Base64.decode(SpecVectorTests.vectors.attestationCACertificateDER))
        let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let pem = "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
        #expect(RelyingParty.trustAnchors(pem: pem + pem)?.count == 2)
        #expect(RelyingParty.trustAnchors(pem: "") == nil)
        #expect(RelyingParty.trustAnchors(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n") == nil)
    }

    @Test func aaguidsAreFormattedAsUUIDs() async throws {
        let vector = try AttestationFormatTests.vector("PackedES256WithMDS")
        #expect(try await AttestationFormatTests.verify(vector).aaguidString == "876ca4f5-2071-c3e9-b255-09ef2cdf7ed6")
        let none = try await VerificationStepTests.register()
        #expect(none.aaguidString == "00000000-0000-0000-0000-000000000000")
    }
}

import Crypto
import _CryptoExtras

/// The RSA algorithms of RFC 8812 and RFC 8230 beyond RS256 and PS256: PS384, PS512, RS384, RS512.
struct RSAAlgorithmTests {
    @Test(arguments: [COSEAlgorithm.ps384, .ps512, .rs384, .rs512])
    func signaturesVerifyWithTheirOwnHashAndPadding(algorithm: COSEAlgorithm) throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try key.publicKey.getKeyPrimitives()
        let cose = try COSEKey(.map([
            .int(1): .int(3), .int(3): .int(algorithm.rawValue),
            .int(-1): .bytes(Array(primitives.modulus)), .int(-2): .bytes(Array(primitives.publicExponent)),
        ]))
        let data = Array("signed by an RSA credential".utf8)
        let pss = algorithm == .ps384 || algorithm == .ps512
        let padding: _RSA.Signing.Padding = pss ? .PSS : .insecurePKCS1v1_5
        let signature: _RSA.Signing.RSASignature
        switch algorithm {
        case .ps384, .rs384: signature = try key.signature(for: SHA384.hash(data: data), padding: padding)
        default: signature = try key.signature(for: SHA512.hash(data: data), padding: padding)
        }
        #expect(cose.algorithm == algorithm)
        #expect(algorithm.isRSA)
        #expect(cose.isValidSignature(Array(signature.rawRepresentation), for: data))
        // The same signature under SHA-256 (what RS256/PS256 would check) does not verify: the hash is the algorithm's.
        let sha256 = try key.signature(for: SHA256.hash(data: data), padding: padding)
        #expect(!cose.isValidSignature(Array(sha256.rawRepresentation), for: data))
        #expect(!COSEAlgorithm.recommended.contains(algorithm))
    }
}

/// ES256, ES384 and ES512 credentials: WebAuthn's DER signatures verify through the COSE key (parsed by
/// TouchstoneCrypto's DER reader), and nothing else does.
struct ECDSAAlgorithmTests {
    @Test(arguments: [COSEAlgorithm.es256, .es384, .es512])
    func derSignaturesVerifyAndOthersDoNot(algorithm: COSEAlgorithm) throws {
        let data = Array("signed by an EC2 credential".utf8)
        let point: [UInt8]
        let der: [UInt8]
        let raw: [UInt8]
        let otherDER: [UInt8]
        let curve: Int
        switch algorithm {
        case .es256:
            let key = P256.Signing.PrivateKey()
            let signature = try key.signature(for: data)
            (point, der, raw, curve) = (Array(key.publicKey.x963Representation), Array(signature.derRepresentation), Array(signature.rawRepresentation), 1)
            otherDER = Array(try P256.Signing.PrivateKey().signature(for: data).derRepresentation)
        case .es384:
            let key = P384.Signing.PrivateKey()
            let signature = try key.signature(for: data)
            (point, der, raw, curve) = (Array(key.publicKey.x963Representation), Array(signature.derRepresentation), Array(signature.rawRepresentation), 2)
            otherDER = Array(try P384.Signing.PrivateKey().signature(for: data).derRepresentation)
        default:
            let key = P521.Signing.PrivateKey()
            let signature = try key.signature(for: data)
            (point, der, raw, curve) = (Array(key.publicKey.x963Representation), Array(signature.derRepresentation), Array(signature.rawRepresentation), 3)
            otherDER = Array(try P521.Signing.PrivateKey().signature(for: data).derRepresentation)
        }
        let size = (point.count - 1) / 2
        let cose = try COSEKey(.map([
            .int(1): .int(2), .int(3): .int(algorithm.rawValue), .int(-1): .int(curve),
            .int(-2): .bytes(Array(point[1...size])), .int(-3): .bytes(Array(point[(size + 1)...])),
        ]))
        #expect(cose.isValidSignature(der, for: data))
        #expect(!cose.isValidSignature(der, for: data + [0]))
        #expect(!cose.isValidSignature(otherDER, for: data))
        // WebAuthn's ECDSA signatures are DER: the raw r‖s form is refused.
        #expect(!cose.isValidSignature(raw, for: data))
        var trailing = der
        trailing.append(0)
        #expect(!cose.isValidSignature(trailing, for: data))
    }
}
