public import Foundation
public import X509
import Crypto

/// How strongly the relying party wants the user verified (WebAuthn Level 3 §5.8.6).
public enum UserVerificationRequirement: String, Sendable, Hashable, Codable {
    case required, preferred, discouraged
}

/// What kind of attestation a registration established (WebAuthn Level 3 §6.5.4).
public enum AttestationType: String, Sendable, Hashable, Codable, Comparable {
    /// No attestation statement.
    case none
    /// Signed by the credential key itself.
    case `self`
    /// Signed by an attestation key whose certificate chains to a configured trust anchor.
    case basic
    /// Like basic, through an attestation CA (TPM).
    case attCA
    /// An anonymising CA issued a per-credential certificate (Apple).
    case anonCA

    private var rank: Int {
        switch self {
        case .none: 0
        case .self: 1
        case .basic, .attCA, .anonCA: 2
        }
    }

    /// `none` < `self` < certificate-based types.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}

/// Everything a ceremony checks against: the relying party's identity and policy.
public struct RelyingParty: Sendable {
    /// The RP ID (a registrable domain, e.g. `example.org`).
    public var id: String {
        didSet { self.idHash = Self.hash(self.id) }
    }
    /// SHA-256 of ``id``, what authenticator data carries (kept, not recomputed for every assertion).
    private(set) var idHash: [UInt8]
    public var name: String
    /// Origins accepted in clientDataJSON: web origins (`https://example.org`) and Android app origins
    /// (`android:apk-key-hash:...`).
    public var origins: [String]
    /// Whether a ceremony in a cross-origin iframe is accepted (`crossOrigin: true`).
    public var allowCrossOrigin: Bool = false
    /// When cross-origin use is allowed, the top-level origins it may be embedded in (empty: any).
    public var allowedTopOrigins: [String] = []
    public var userVerification: UserVerificationRequirement = .preferred
    /// Algorithms accepted for new credentials.
    public var algorithms: [COSEAlgorithm] = COSEAlgorithm.recommended
    /// Roots that attestation certificate chains must lead to.
    public var trustAnchors: [Certificate] = []
    /// The weakest attestation accepted; with `.basic` (or stronger) the chain must reach a trust anchor.
    public var minimumAttestation: AttestationType = .none
    /// Authenticator metadata (a verified FIDO MDS BLOB): each model's attestation roots are trust anchors for that
    /// model (by AAGUID; FIDO U2F by attestation key identifier), and its status reports are checked at registration.
    public var metadata: MetadataBLOB?
    /// Status reports that refuse a registration when they apply to the authenticator (``MetadataEntry/activeReport(refusing:attestationCertificate:)``).
    public var refusedStatuses: Set<AuthenticatorStatus> = AuthenticatorStatus.compromised
    /// Accept only authenticators that ``metadata`` lists as FIDO certified and whose attestation chains to a trust
    /// anchor ("certified authenticators only"; needs attestation conveyance `direct` or `enterprise`).
    public var requireCertifiedAuthenticators: Bool = false
    /// Reject (rather than only report) an assertion whose sign counter did not increase.
    public var rejectCounterRegression: Bool = false

    private static func hash(_ id: String) -> [UInt8] { Array(SHA256.hash(data: Array(id.utf8))) }

    public init(id: String, name: String, origins: [String]) {
        self.id = id
        self.idHash = Self.hash(id)
        self.name = name
        self.origins = origins
    }
}
