public import Crypto
public import Foundation
import SwiftASN1
import TouchstoneCrypto
public import TouchstoneWebAuthn
public import X509

/// An attestation root made in the test, issuing `packed` attestation certificates (WebAuthn Level 3 §8.2.1), to turn a
/// virtual authenticator's "none" registration into a certificate-based one.
public struct TestAttestationCA: Sendable {
    public let key = P256.Signing.PrivateKey()
    public let certificate: Certificate

    /// A root valid over `validity` (by default from a year before to a year after 2027-01-15, the manual clock's start).
    public init(validity: ClosedRange<Date> = Self.aroundTestTime) throws {
        let name = try DistinguishedName {
            CountryName("AA")
            OrganizationName("Touchstone tests")
            CommonName("Test attestation root")
        }
        self.certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(self.key.publicKey),
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(self.key)
        )
    }

    public static let aroundTestTime: ClosedRange<Date> =
        Date(timeIntervalSince1970: 1_800_000_000 - 365 * 86_400)...Date(timeIntervalSince1970: 1_800_000_000 + 365 * 86_400)

    /// The root as a PEM document, as `TOUCHSTONE_TRUST_ANCHORS` files hold it.
    public var pem: String {
        get throws { try self.certificate.serializeAsPEM().pemString }
    }

    /// An attestation certificate for `key`, valid over `validity`.
    public func issue(for key: P256.Signing.PrivateKey, validity: ClosedRange<Date> = Self.aroundTestTime) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: self.certificate.subject,
            subject: try DistinguishedName {
                CountryName("AA")
                OrganizationName("Touchstone tests")
                OrganizationalUnitName("Authenticator Attestation")
                CommonName("Test authenticator")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) },
            issuerPrivateKey: .init(self.key)
        )
    }

    /// Rewrites a `RegistrationResponseJSON` (as ``VirtualAuthenticator/respond(toCreationOptions:origin:)`` makes it)
    /// with a `packed` attestation: the same authenticator data and client data, signed by a new attestation key whose
    /// certificate this root issues with `validity`.
    public func packedResponse(from response: [UInt8], validity: ClosedRange<Date> = Self.aroundTestTime) throws -> [UInt8] {
        guard var object = try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any],
            var inner = object["response"] as? [String: Any],
            let authData = (inner["authenticatorData"] as? String).flatMap({ Base64.decode($0) }),
            let clientData = (inner["clientDataJSON"] as? String).flatMap({ Base64.decode($0) })
        else {
            throw CocoaError(.coderReadCorrupt)
        }
        let attestationKey = P256.Signing.PrivateKey()
        var serializer = DER.Serializer()
        try serializer.serialize(try self.issue(for: attestationKey, validity: validity))
        let signed = authData + Array(SHA256.hash(data: clientData))
        let statement: CBORMap = [
            .text("alg"): .int(-7), .text("sig"): .bytes(Array(try attestationKey.signature(for: signed).derRepresentation)),
            .text("x5c"): .array([.bytes(serializer.serializedBytes)]),
        ]
        inner["attestationObject"] = Base64.urlEncode(
            CBOREncoder.encode(.map([.text("fmt"): .text("packed"), .text("attStmt"): .map(statement), .text("authData"): .bytes(authData)]))
        )
        object["response"] = inner
        return Array(try JSONSerialization.data(withJSONObject: object))
    }
}
