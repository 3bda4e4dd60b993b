public import Crypto
import _CryptoExtras
public import Foundation
import SwiftASN1
import TouchstoneCrypto
public import TouchstoneWebAuthn
public import X509

/// A metadata service made in the test: its own root (standing in for GlobalSign Root R3) and signing certificate,
/// signing BLOBs shaped like the FIDO Alliance's (FIDO Metadata Service v3.1 §3.1.6), so no test needs the network.
public struct TestMetadataService: Sendable {
    public let rootKey = P256.Signing.PrivateKey()
    public let root: Certificate
    /// The BLOB signer's key: ES256 by default, RS256 (what the FIDO Alliance uses) on request.
    let signerKey: SignerKey
    public let signer: Certificate

    enum SignerKey: Sendable {
        case p256(P256.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    /// - Parameters:
    ///   - rsa: Sign with RS256 instead of ES256.
    ///   - validity: The signing certificate's validity (by default a year either side of 2027-01-15).
    public init(rsa: Bool = false, validity: ClosedRange<Date> = TestAttestationCA.aroundTestTime) throws {
        let rootName = try DistinguishedName {
            OrganizationName("Touchstone tests")
            CommonName("Test metadata root")
        }
        self.root = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(self.rootKey.publicKey),
            notValidBefore: TestAttestationCA.aroundTestTime.lowerBound.addingTimeInterval(-86_400),
            notValidAfter: TestAttestationCA.aroundTestTime.upperBound.addingTimeInterval(86_400),
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(self.rootKey)
        )
        let publicKey: Certificate.PublicKey
        if rsa {
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            self.signerKey = .rsa(key)
            publicKey = .init(key.publicKey)
        } else {
            let key = P256.Signing.PrivateKey()
            self.signerKey = .p256(key)
            publicKey = .init(key.publicKey)
        }
        self.signer = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: publicKey,
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: rootName,
            subject: try DistinguishedName {
                OrganizationName("Touchstone tests")
                CommonName("Test metadata BLOB signer")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) },
            issuerPrivateKey: .init(self.rootKey)
        )
    }

    /// The root as PEM (what `TOUCHSTONE_MDS_ROOTS` names).
    public var rootPEM: String {
        get throws { try self.root.serializeAsPEM().pemString }
    }

    /// A signed BLOB holding `entries` (objects as ``entry(aaguid:keyIdentifiers:description:icon:roots:statuses:)``
    /// makes them).
    public func blob(number: Int, nextUpdate: String, entries: [[String: any Sendable]], x5c: [Certificate]? = nil) throws -> String {
        let payload: [String: Any] = [
            "legalHeader": "Test metadata: not the FIDO Alliance's.",
            "no": number,
            "nextUpdate": nextUpdate,
            "entries": entries,
        ]
        return try self.sign(payload: Array(try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])), x5c: x5c)
    }

    /// Signs any payload bytes as a BLOB.
    public func sign(payload: [UInt8], x5c: [Certificate]? = nil) throws -> String {
        let chain = try (x5c ?? [self.signer]).map { certificate -> String in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return Data(serializer.serializedBytes).base64EncodedString()
        }
        let alg: String
        switch self.signerKey {
        case .p256: alg = "ES256"
        case .rsa: alg = "RS256"
        }
        let header: [String: Any] = ["alg": alg, "typ": "JWT", "x5c": chain]
        let signingInput =
            Base64.urlEncode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "." + Base64.urlEncode(payload)
        let signature: [UInt8]
        switch self.signerKey {
        case .p256(let key): signature = Array(try key.signature(for: Array(signingInput.utf8)).rawRepresentation)
        case .rsa(let key):
            signature = Array(try key.signature(for: SHA256.hash(data: Array(signingInput.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation)
        }
        return signingInput + "." + Base64.urlEncode(signature)
    }

    /// One `MetadataBLOBPayloadEntry`.
    ///
    /// - Parameter statuses: `(status, effectiveDate)` pairs, oldest first.
    public static func entry(
        aaguid: String? = nil,
        keyIdentifiers: [String]? = nil,
        description: String,
        icon: String? = nil,
        roots: [Certificate] = [],
        statuses: [(String, String)] = [("FIDO_CERTIFIED_L1", "2025-01-01")],
        reportCertificate: Certificate? = nil
    ) throws -> [String: any Sendable] {
        var statement: [String: any Sendable] = [
            "description": description,
            "attestationRootCertificates": try roots.map { certificate -> String in
                var serializer = DER.Serializer()
                try serializer.serialize(certificate)
                return Data(serializer.serializedBytes).base64EncodedString()
            },
            "schema": 3,
            "protocolFamily": keyIdentifiers == nil ? "fido2" : "u2f",
        ]
        if let icon { statement["icon"] = icon }
        var certificateText: String?
        if let reportCertificate {
            var serializer = DER.Serializer()
            try serializer.serialize(reportCertificate)
            certificateText = Data(serializer.serializedBytes).base64EncodedString()
        }
        var entry: [String: any Sendable] = [
            "metadataStatement": statement,
            "statusReports": statuses.map { status, date -> [String: any Sendable] in
                var report: [String: any Sendable] = ["status": status, "effectiveDate": date]
                if let certificateText, !status.hasPrefix("FIDO_CERTIFIED") { report["certificate"] = certificateText }
                return report
            },
            "timeOfLastStatusChange": statuses.last?.1 ?? "2025-01-01",
        ]
        if let aaguid { entry["aaguid"] = aaguid }
        if let keyIdentifiers { entry["attestationCertificateKeyIdentifiers"] = keyIdentifiers }
        return entry
    }
}
