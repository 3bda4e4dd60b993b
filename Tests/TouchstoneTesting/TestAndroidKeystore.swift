public import Crypto
public import Foundation
import SwiftASN1
public import X509

/// An Android keystore made in the test: a root and an intermediate standing for Google's attestation root and a
/// device's batch key, issuing attestation certificates whose key description says what ``Key`` says, the way
/// `KeyStore.getCertificateChain` returns them (leaf first, root last).
public struct TestAndroidKeystore: Sendable {
    /// What the attestation certificate says of the key (by default: what Touchstone asks an app to make).
    public struct Key: Sendable {
        public var challenge: [UInt8]
        /// Attestation and keystore security level: 0 software, 1 TEE, 2 StrongBox.
        public var securityLevel = 1
        public var purposes = [2]
        /// `KeyOrigin`: 0 generated, 2 imported.
        public var origin = 0
        public var noAuthRequired = false
        /// `HardwareAuthenticatorType` bits: 1 password, 2 biometric; nil leaves the field out.
        public var userAuthType: Int64? = 2
        public var allApplications = false
        public var packageNames = ["com.example.touchstone"]
        public var signatureDigests: [[UInt8]] = [TestAndroidKeystore.signingCertificateSHA256]
        /// Bytes to put in the attestation application id instead of the DER made from the packages and digests.
        public var rawApplicationId: [UInt8]?

        public init(challenge: [UInt8]) {
            self.challenge = challenge
        }
    }

    /// The test app's signing certificate digest (as `TOUCHSTONE_ANDROID_APPS` would name it).
    public static let signingCertificateSHA256: [UInt8] = Array(SHA256.hash(data: Array("test signing certificate".utf8)))
    /// `com.example.touchstone:<digest>`, the `TOUCHSTONE_ANDROID_APPS` entry for the test app.
    public static var appEntry: String {
        "com.example.touchstone:" + Self.signingCertificateSHA256.map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    private let rootKey = P256.Signing.PrivateKey()
    private let intermediateKey = P256.Signing.PrivateKey()
    public let root: Certificate
    public let intermediate: Certificate

    public init(validity: ClosedRange<Date> = TestAttestationCA.aroundTestTime) throws {
        let rootName = try DistinguishedName { CommonName("Test Android attestation root") }
        self.root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(self.rootKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(self.rootKey)
        )
        self.intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(self.intermediateKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, issuer: rootName,
            subject: try DistinguishedName {
                OrganizationName("TEE")
                CommonName("Test batch key")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(self.rootKey)
        )
    }

    /// The chain for `publicKey` (DER, leaf first), its leaf valid over `validity`.
    public func chain(
        for publicKey: P256.Signing.PublicKey,
        key: Key,
        validity: ClosedRange<Date> = TestAttestationCA.aroundTestTime,
        leafSerial: Certificate.SerialNumber = .init()
    ) throws -> [[UInt8]] {
        let description = Certificate.Extension(oid: [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17], critical: false, value: try Self.keyDescription(key)[...])
        let leaf = try Certificate(
            version: .v3, serialNumber: leafSerial, publicKey: .init(publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, issuer: self.intermediate.subject,
            subject: try DistinguishedName { CommonName("Android Keystore Key") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions([description]),
            issuerPrivateKey: .init(self.intermediateKey)
        )
        return try [leaf, self.intermediate, self.root].map { certificate in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }

    /// The chain as base64 strings, as an enrolment's `keyAttestation` carries it.
    public func encodedChain(for publicKey: P256.Signing.PublicKey, key: Key) throws -> [String] {
        try self.chain(for: publicKey, key: key).map { Data($0).base64EncodedString() }
    }

    /// The root as PEM (a `TOUCHSTONE_ANDROID_ATTESTATION_ROOTS` file).
    public var rootPEM: String {
        get throws { try self.root.serializeAsPEM().pemString }
    }

    /// The DER of a KeyDescription (attestation version 200) saying what `key` says.
    public static func keyDescription(_ key: Key) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(200)  // attestationVersion
            try key.securityLevel.serialize(into: &coder, withIdentifier: .enumerated)
            try coder.serialize(200)  // keyMintVersion
            try key.securityLevel.serialize(into: &coder, withIdentifier: .enumerated)
            try coder.serialize(ASN1OctetString(contentBytes: key.challenge[...]))
            try coder.serialize(ASN1OctetString(contentBytes: []))  // uniqueId
            // softwareEnforced: the application id, as Android puts it there.
            try coder.appendConstructedNode(identifier: .sequence) { list in
                let applicationId = try key.rawApplicationId ?? Self.applicationId(key)
                try Self.field(709, in: &list) { try $0.serialize(ASN1OctetString(contentBytes: applicationId[...])) }
            }
            // hardwareEnforced, in tag order.
            try coder.appendConstructedNode(identifier: .sequence) { list in
                try Self.field(1, in: &list) { coder in
                    try coder.appendConstructedNode(identifier: .set) { set in
                        for purpose in key.purposes { try set.serialize(purpose) }
                    }
                }
                if key.noAuthRequired { try Self.field(503, in: &list) { try $0.serialize(ASN1Null()) } }
                if let types = key.userAuthType { try Self.field(504, in: &list) { try $0.serialize(types) } }
                if key.allApplications { try Self.field(600, in: &list) { try $0.serialize(ASN1Null()) } }
                try Self.field(702, in: &list) { try $0.serialize(key.origin) }
            }
        }
        return serializer.serializedBytes
    }

    private static func field(_ tag: UInt, in coder: inout DER.Serializer, _ body: (inout DER.Serializer) throws -> Void) throws {
        try coder.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: tag, tagClass: .contextSpecific), body)
    }

    private static func applicationId(_ key: Key) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            try coder.appendConstructedNode(identifier: .set) { set in
                for name in key.packageNames {
                    try set.appendConstructedNode(identifier: .sequence) { info in
                        try info.serialize(ASN1OctetString(contentBytes: Array(name.utf8)[...]))
                        try info.serialize(1)
                    }
                }
            }
            try coder.appendConstructedNode(identifier: .set) { set in
                for digest in key.signatureDigests { try set.serialize(ASN1OctetString(contentBytes: digest[...])) }
            }
        }
        return serializer.serializedBytes
    }
}
