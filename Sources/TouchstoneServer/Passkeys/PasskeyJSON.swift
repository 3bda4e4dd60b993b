import Foundation
import TouchstoneStore
import TouchstoneWebAuthn

/// The body of `POST /v1/passkeys/registrations/verify`: a `RegistrationResponseJSON` and an optional name.
struct NamedRegistrationResponse: Decodable {
    var credential: RegistrationResponseJSON
    var name: String?
    /// `conditional` for an automatic upgrade (`navigator.credentials.create({mediation: "conditional"})`).
    var mediation: RelyingParty.Mediation

    enum CodingKeys: CodingKey { case name, mediation }

    init(from decoder: any Decoder) throws {
        self.credential = try RegistrationResponseJSON(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.name = try container.decodeDisplayTextIfPresent(.name)
        let mediation = try container.decodeIfPresent(String.self, forKey: .mediation) ?? "modal"
        guard let value = RelyingParty.Mediation(rawValue: mediation) else {
            throw APIError.invalidRequest("field 'mediation' must be modal or conditional")
        }
        self.mediation = value
    }
}

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.4).
struct CreationOptionsJSON: Encodable {
    struct RelyingPartyEntity: Encodable {
        var id: String
        var name: String
    }
    struct UserEntity: Encodable {
        var id: String
        var name: String
        var displayName: String
    }
    struct Parameter: Encodable {
        var type = "public-key"
        var alg: Int
    }
    struct Descriptor: Encodable {
        var type = "public-key"
        var id: String
    }
    struct Selection: Encodable {
        var residentKey = "required"
        var requireResidentKey = true
        var userVerification: String
    }
    struct Extensions: Encodable {
        var credProps = true
    }

    var rp: RelyingPartyEntity
    var user: UserEntity
    var challenge: String
    var pubKeyCredParams: [Parameter]
    var timeout: Int
    var excludeCredentials: [Descriptor]
    var authenticatorSelection: Selection
    var attestation: String
    var extensions = Extensions()
    /// WebAuthn Level 3 `hints`, most preferred first; absent when none.
    var hints: [String]?
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.5).
struct RequestOptionsJSON: Encodable {
    var challenge: String
    var timeout: Int
    var rpId: String
    var allowCredentials: [CreationOptionsJSON.Descriptor]
    var userVerification: String
    /// WebAuthn Level 3 `hints`, most preferred first; absent when none.
    var hints: [String]?
}

/// WebAuthn Level 3 `PublicKeyCredentialHint` (§5.8.7): which kind of authenticator the page would like the browser to
/// offer first.
enum PasskeyHint: String, CaseIterable, Sendable {
    case securityKey = "security-key"
    case clientDevice = "client-device"
    case hybrid

    /// Hints as a request or the configuration names them: known values, no repeats, at most three.
    static func parse(_ values: [String], field: String) throws -> [PasskeyHint] {
        var hints: [PasskeyHint] = []
        for value in values {
            guard let hint = PasskeyHint(rawValue: value) else {
                throw APIError.invalidRequest("field '\(field)' may hold security-key, client-device and hybrid; not '\(value.prefix(40))'")
            }
            guard !hints.contains(hint) else { throw APIError.invalidRequest("field '\(field)' repeats '\(value)'") }
            hints.append(hint)
        }
        return hints
    }
}

/// What metadata says of a passkey's authenticator model (admin API).
struct AuthenticatorStatusResource: Encodable {
    /// The latest status report's status (`FIDO_CERTIFIED_L1`, `USER_VERIFICATION_BYPASS`...).
    var status: String?
    var effectiveDate: String?
    var certified: Bool
    /// A status report the server's policy refuses applies (or, about one attestation certificate, may apply) to
    /// the model: a new registration of it would be refused.
    var refusedStatus: String?
    var refusedSince: String?
}

/// `passkey` in responses.
struct PasskeyResource: Encodable {
    var id: String
    var name: String?
    var aaguid: String
    var backupEligible: Bool
    var backedUp: Bool
    var createdAt: String
    var lastUsedAt: String?
    /// Locked after too many failed assertions (`POST /v1/passkeys/{id}/unlock`).
    var locked: Bool
    /// The credential id (base64url), as the authenticator knows it: what the Signal API names.
    var credentialId: String
    /// `modal` or `conditional` (an automatic upgrade).
    var createdVia: String
    /// The authenticator's name: the FIDO Metadata Service's when it knows the model, else the community list's
    /// ("Google Password Manager"), else null.
    var authenticatorName: String?
    /// The model's icon from the FIDO Metadata Service (a `data:` URL), or null.
    var authenticatorIcon: String?
    /// Admin API only: what metadata says of the model (absent when metadata does not know it).
    var authenticatorStatus: AuthenticatorStatusResource?

    init(_ record: PasskeyRecord, metadata: MetadataBLOB? = nil, refusing refused: Set<AuthenticatorStatus>? = nil) {
        self.locked = record.lockedAt != nil
        self.credentialId = record.credentialId
        self.createdVia = record.createdVia
        let entry = metadata?.entry(format: record.attestationFormat, aaguid: record.aaguid, keyIdentifier: record.attestationKeyId)
        self.authenticatorName = entry?.description ?? KnownAuthenticators.name(forAAGUID: record.aaguid)
        self.authenticatorIcon = entry?.icon
        if let entry, let refused {
            let report = entry.activeReport(refusing: refused)
            self.authenticatorStatus = AuthenticatorStatusResource(
                status: entry.status?.rawValue,
                effectiveDate: entry.statusReports.last?.effectiveDate,
                certified: entry.isCertified,
                refusedStatus: report?.status.rawValue,
                refusedSince: report?.effectiveDate
            )
        }
        self.id = record.id
        self.name = record.name
        self.aaguid = record.aaguid
        self.backupEligible = record.backupEligible
        self.backedUp = record.backedUp
        self.createdAt = record.createdAt.rfc3339
        self.lastUsedAt = record.lastUsedAt?.rfc3339
    }

    enum CodingKeys: CodingKey {
        case id, credentialId, name, aaguid, authenticatorName, authenticatorIcon, authenticatorStatus, backupEligible, backedUp, createdAt
        case lastUsedAt, locked, createdVia
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.credentialId, forKey: .credentialId)
        try container.encode(self.name, forKey: .name)
        try container.encode(self.aaguid, forKey: .aaguid)
        try container.encode(self.authenticatorName, forKey: .authenticatorName)
        try container.encode(self.authenticatorIcon, forKey: .authenticatorIcon)
        try container.encodeIfPresent(self.authenticatorStatus, forKey: .authenticatorStatus)
        try container.encode(self.backupEligible, forKey: .backupEligible)
        try container.encode(self.backedUp, forKey: .backedUp)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.lastUsedAt, forKey: .lastUsedAt)
        try container.encode(self.locked, forKey: .locked)
        try container.encode(self.createdVia, forKey: .createdVia)
    }
}
