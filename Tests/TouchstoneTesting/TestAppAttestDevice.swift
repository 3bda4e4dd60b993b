public import Crypto
public import Foundation
import SwiftASN1
public import X509
public import TouchstoneWebAuthn
public import TouchstoneKit

/// An App Attest "device" for tests: a certificate authority standing in for Apple's, and Secure Enclave keys it
/// attests, producing attestation objects and assertions byte for byte as `DCAppAttestService` lays them out.
public struct TestAppAttestDevice: Sendable {
    public let rootKey = P256.Signing.PrivateKey()
    /// The stand-in for the Apple App Attestation Root CA.
    public let root: Certificate
    public let appId: String
    public let environment: AppAttestVerifier.Environment

    /// The certificates' validity: wide enough for the real clock and the tests' manual clock (2027).
    public static let validFrom = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01
    public static let validUntil = Date(timeIntervalSince1970: 2_208_988_800)  // 2040-01-01

    public init(appId: String, environment: AppAttestVerifier.Environment = .development) throws {
        self.appId = appId
        self.environment = environment
        let name = try DistinguishedName { CommonName("App Attest test root") }
        self.root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(self.rootKey.publicKey),
            notValidBefore: Self.validFrom, notValidAfter: Self.validUntil,
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(self.rootKey))
    }

    /// SHA-256 of the key's X9.63 public key: the key id `generateKey` returns.
    public static func keyId(of key: P256.Signing.PrivateKey) -> [UInt8] {
        Array(SHA256.hash(data: key.publicKey.x963Representation))
    }

    public func authenticatorData(counter: UInt32, credentialId: [UInt8]? = nil, appId: String? = nil) -> [UInt8] {
        var bytes = Array(SHA256.hash(data: Array((appId ?? self.appId).utf8)))
        bytes.append(credentialId == nil ? 0x00 : 0x40)
        bytes += withUnsafeBytes(of: counter.bigEndian, Array.init)
        if let credentialId {
            bytes += self.environment.aaguid + [UInt8(credentialId.count >> 8), UInt8(credentialId.count & 0xFF)] + credentialId
        }
        return bytes
    }

    /// `attestKey(keyId, clientDataHash:)`, with the fields a test may want wrong.
    public func attest(
        _ key: P256.Signing.PrivateKey,
        clientDataHash: [UInt8],
        counter: UInt32 = 0,
        credentialId: [UInt8]? = nil
    ) throws -> [UInt8] {
        let authData = self.authenticatorData(counter: counter, credentialId: credentialId ?? Self.keyId(of: key))
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        var extensions = Certificate.Extensions()
        let value: [UInt8] = [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce  // SEQUENCE { [1] { OCTET STRING nonce } }
        try extensions.append(Certificate.Extension(oid: [1, 2, 840, 113635, 100, 8, 2], critical: false, value: value[...]))
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Self.validFrom, notValidAfter: Self.validUntil,
            issuer: self.root.subject, subject: try DistinguishedName { CommonName("App Attest test key") },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(self.rootKey))
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        let statement: CBORMap = [.text("x5c"): .array([.bytes(serializer.serializedBytes)]), .text("receipt"): .bytes([1, 2, 3])]
        return CBOREncoder.encode(
            .map([.text("fmt"): .text("apple-appattest"), .text("attStmt"): .map(statement), .text("authData"): .bytes(authData)]))
    }

    /// `generateAssertion(keyId, clientDataHash: SHA256(clientData))`.
    public func assert(_ key: P256.Signing.PrivateKey, clientData: [UInt8], counter: UInt32, appId: String? = nil) throws -> [UInt8] {
        try self.assert(key, clientDataHash: Array(SHA256.hash(data: clientData)), counter: counter, appId: appId)
    }

    /// `generateAssertion(keyId, clientDataHash:)`.
    public func assert(_ key: P256.Signing.PrivateKey, clientDataHash: [UInt8], counter: UInt32, appId: String? = nil) throws -> [UInt8] {
        let authData = self.authenticatorData(counter: counter, appId: appId)
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        let signature = try key.signature(for: nonce)
        return CBOREncoder.encode(
            .map([.text("signature"): .bytes(Array(signature.derRepresentation)), .text("authenticatorData"): .bytes(authData)]))
    }
}

/// `DCAppAttestService` for the SDK's tests: keys in memory, attested by a ``TestAppAttestDevice``.
public actor TestAppAttestProvider: AppAttestProvider {
    public let device: TestAppAttestDevice
    private var keys: [String: (key: P256.Signing.PrivateKey, counter: UInt32)] = [:]
    /// How many keys were generated (an installation attests once).
    public private(set) var generatedKeys = 0
    public nonisolated let isSupportedValue: Bool

    public init(device: TestAppAttestDevice, isSupported: Bool = true) {
        self.device = device
        self.isSupportedValue = isSupported
    }

    public var isSupported: Bool { self.isSupportedValue }

    public func generateKey() async throws -> String {
        let key = P256.Signing.PrivateKey()
        let keyId = Data(TestAppAttestDevice.keyId(of: key)).base64EncodedString()
        self.keys[keyId] = (key, 0)
        self.generatedKeys += 1
        return keyId
    }

    public func attestKey(_ keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] {
        guard let entry = self.keys[keyId] else { throw BiometricLoginError(.internalFailure, "unknown App Attest key") }
        return try self.device.attest(entry.key, clientDataHash: clientDataHash)
    }

    public func generateAssertion(_ keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] {
        guard var entry = self.keys[keyId] else { throw BiometricLoginError(.internalFailure, "unknown App Attest key") }
        entry.counter += 1
        self.keys[keyId] = entry
        return try self.device.assert(entry.key, clientDataHash: clientDataHash, counter: entry.counter)
    }
}
