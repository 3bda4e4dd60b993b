public import Foundation
public import X509
import Crypto
import SwiftASN1
import TouchstoneCrypto

/// One authenticator model of a metadata BLOB (`MetadataBLOBPayloadEntry`, FIDO Metadata Service v3.1 §3.1.1): who
/// it is, which roots its attestation chains to, and what the FIDO Alliance says of its security.
public struct MetadataEntry: Sendable {
    /// The FIDO2 model's AAGUID (lowercase UUID), nil for U2F and UAF models.
    public var aaguid: String?
    /// U2F models: the key identifiers (lowercase hex) of their attestation certificates.
    public var attestationCertificateKeyIdentifiers: [String]
    /// The model's name (`metadataStatement.description`).
    public var description: String?
    /// Its icon, a `data:` URL (`metadataStatement.icon`).
    public var icon: String?
    /// The roots (or attestation certificates) its attestation chains to (`attestationRootCertificates`).
    public var attestationRoots: [Certificate]
    /// Status reports, oldest first (by effective date; the BLOB's order among equal dates).
    public var statusReports: [StatusReport]

    /// The AAGUID of authenticators that do not name their model (and of U2F ones).
    public static let zeroAAGUID = "00000000-0000-0000-0000-000000000000"

    /// The latest status report's status.
    public var status: AuthenticatorStatus? { self.statusReports.last?.status }

    /// Whether the model's latest certification decision is a FIDO certification (not later revoked or replaced by
    /// "not certified"). Update and compromise reports are not certification decisions: a compromise is what
    /// ``activeReport(refusing:attestationCertificate:)`` finds.
    public var isCertified: Bool {
        let decisions = self.statusReports.filter { $0.status.isCertification || $0.status.isCertificationDecision }
        return decisions.last?.status.isCertification ?? false
    }

    /// The report that makes this authenticator unacceptable under a policy refusing `statuses`, if any: the latest
    /// report with one of them that applies to this authenticator and was not followed by a new FIDO certification
    /// (which means the fixed model was certified again). A report naming a `certificate` applies only to an
    /// authenticator attested by that certificate.
    public func activeReport(refusing statuses: Set<AuthenticatorStatus>, attestationCertificate: Certificate?) -> StatusReport? {
        self.activeReport(refusing: statuses) { $0.applies(to: attestationCertificate) }
    }

    /// The same for an authenticator whose attestation certificate is not known (a stored passkey): reports about one
    /// certificate count too, as they may concern it.
    public func activeReport(refusing statuses: Set<AuthenticatorStatus>) -> StatusReport? {
        self.activeReport(refusing: statuses) { _ in true }
    }

    private func activeReport(refusing statuses: Set<AuthenticatorStatus>, applies: (StatusReport) -> Bool) -> StatusReport? {
        var active: StatusReport?
        for report in self.statusReports {
            if report.status.isCertification {
                active = nil
            } else if statuses.contains(report.status) && applies(report) {
                active = report
            }
        }
        return active
    }

    /// The key identifier of an attestation certificate as MDS lists it: the lowercase hex SHA-1 of the
    /// certificate's subjectPublicKey (the BIT STRING's bytes; RFC 5280 §4.2.1.2 method 1).
    public static func keyIdentifier(of certificate: Certificate) -> String {
        // swift-certificates' subjectPublicKeyInfoBytes is the BIT STRING's bytes (not the whole SPKI).
        Hex.encode(Insecure.SHA1.hash(data: Array(certificate.publicKey.subjectPublicKeyInfoBytes)))
    }

    /// `YYYY-MM-DD` as midnight UTC.
    static func date(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(day)
        else {
            return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date
    }

    // MARK: JSON

    struct JSON: Decodable {
        struct Statement: Decodable {
            var description: String?
            var icon: String?
            var attestationRootCertificates: [String]?
        }
        struct Report: Decodable {
            var status: String
            var effectiveDate: String?
            var certificate: String?
            var url: String?
            var certificateNumber: String?
        }
        var aaguid: String?
        var attestationCertificateKeyIdentifiers: [String]?
        var metadataStatement: Statement?
        var statusReports: [Report]
    }

    init(_ json: JSON) throws(MetadataError) {
        let name = json.aaguid ?? json.attestationCertificateKeyIdentifiers?.first ?? "an entry"
        if let aaguid = json.aaguid {
            guard UUID(uuidString: aaguid) != nil else { throw MetadataError(.malformed, "entry aaguid '\(aaguid.prefix(40))' is not a UUID") }
            self.aaguid = aaguid.lowercased()
        }
        self.attestationCertificateKeyIdentifiers = (json.attestationCertificateKeyIdentifiers ?? []).map { $0.lowercased() }
        self.description = json.metadataStatement?.description
        self.icon = json.metadataStatement?.icon.flatMap { $0.hasPrefix("data:") ? $0 : nil }
        var roots: [Certificate] = []
        for encoded in json.metadataStatement?.attestationRootCertificates ?? [] {
            guard let der = Base64.decode(encoded, maxDecodedLength: 64 * 1024), let certificate = try? Certificate(derEncoded: der) else {
                throw MetadataError(.malformed, "\(name): an attestation root is not a base64 DER certificate")
            }
            roots.append(certificate)
        }
        self.attestationRoots = roots
        var reports: [(Date, StatusReport)] = []
        for report in json.statusReports {
            var date = Date.distantPast
            if let text = report.effectiveDate {
                guard let parsed = Self.date(text) else { throw MetadataError(.malformed, "\(name): effectiveDate '\(text.prefix(40))' is not a date") }
                date = parsed
            }
            var certificate: [UInt8]?
            if let encoded = report.certificate {
                guard let der = Base64.decode(encoded, maxDecodedLength: 64 * 1024) else {
                    throw MetadataError(.malformed, "\(name): a status report's certificate is not base64")
                }
                certificate = der
            }
            reports.append(
                (date, StatusReport(status: AuthenticatorStatus(rawValue: report.status), effectiveDate: report.effectiveDate, certificate: certificate, url: report.url))
            )
        }
        // Stable: equal dates keep the BLOB's order.
        self.statusReports = reports.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
    }

    public init(
        aaguid: String?,
        attestationCertificateKeyIdentifiers: [String] = [],
        description: String?,
        icon: String? = nil,
        attestationRoots: [Certificate] = [],
        statusReports: [StatusReport]
    ) {
        self.aaguid = aaguid?.lowercased()
        self.attestationCertificateKeyIdentifiers = attestationCertificateKeyIdentifiers.map { $0.lowercased() }
        self.description = description
        self.icon = icon
        self.attestationRoots = attestationRoots
        self.statusReports = statusReports
    }
}

/// A dated statement about an authenticator model (`StatusReport`, FIDO Metadata Service v3.1 §3.1.3).
public struct StatusReport: Sendable, Hashable {
    public var status: AuthenticatorStatus
    /// `YYYY-MM-DD` as the BLOB gives it.
    public var effectiveDate: String?
    /// The attestation certificate the report is about (DER), when it concerns one certificate only.
    public var certificate: [UInt8]?
    public var url: String?

    public init(status: AuthenticatorStatus, effectiveDate: String? = nil, certificate: [UInt8]? = nil, url: String? = nil) {
        self.status = status
        self.effectiveDate = effectiveDate
        self.certificate = certificate
        self.url = url
    }

    func applies(to attestationCertificate: Certificate?) -> Bool {
        guard let certificate = self.certificate else { return true }
        guard let attestationCertificate else { return false }
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(attestationCertificate)) != nil else { return false }
        return serializer.serializedBytes == certificate
    }
}

/// `AuthenticatorStatus` (FIDO Metadata Service v3.1 §3.1.4); values this version does not know are kept as they are.
public struct AuthenticatorStatus: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { self.rawValue }

    public static let notFIDOCertified = Self(rawValue: "NOT_FIDO_CERTIFIED")
    public static let fidoCertified = Self(rawValue: "FIDO_CERTIFIED")
    public static let userVerificationBypass = Self(rawValue: "USER_VERIFICATION_BYPASS")
    public static let attestationKeyCompromise = Self(rawValue: "ATTESTATION_KEY_COMPROMISE")
    public static let userKeyRemoteCompromise = Self(rawValue: "USER_KEY_REMOTE_COMPROMISE")
    public static let userKeyPhysicalCompromise = Self(rawValue: "USER_KEY_PHYSICAL_COMPROMISE")
    public static let updateAvailable = Self(rawValue: "UPDATE_AVAILABLE")
    public static let revoked = Self(rawValue: "REVOKED")
    public static let selfAssertionSubmitted = Self(rawValue: "SELF_ASSERTION_SUBMITTED")
    public static let fidoCertifiedL1 = Self(rawValue: "FIDO_CERTIFIED_L1")
    public static let fidoCertifiedL2 = Self(rawValue: "FIDO_CERTIFIED_L2")
    public static let fidoCertifiedL3 = Self(rawValue: "FIDO_CERTIFIED_L3")

    /// The statuses that say an authenticator's keys or user verification cannot be relied on: what a relying party
    /// refuses by default.
    public static let compromised: Set<Self> = [
        .revoked, .userVerificationBypass, .attestationKeyCompromise, .userKeyRemoteCompromise, .userKeyPhysicalCompromise,
    ]

    /// `FIDO_CERTIFIED` and its levels (`FIDO_CERTIFIED_L1`, `_L1plus`, … `_L3plus`).
    public var isCertification: Bool { self.rawValue == "FIDO_CERTIFIED" || self.rawValue.hasPrefix("FIDO_CERTIFIED_") }

    /// The other outcomes of certification: not certified, self-asserted, revoked.
    var isCertificationDecision: Bool { self == .notFIDOCertified || self == .selfAssertionSubmitted || self == .revoked }
}
