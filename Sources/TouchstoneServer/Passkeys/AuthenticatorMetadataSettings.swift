public import Foundation
public import TouchstoneWebAuthn
public import X509

/// Authenticator metadata from the FIDO Metadata Service (MDS3).
public struct AuthenticatorMetadataSettings: Sendable {
    /// A BLOB file (`TOUCHSTONE_MDS_FILE`), read again when it changes: for servers that cannot reach the FIDO
    /// Alliance and get the BLOB by other means.
    public var file: String?
    /// The BLOB's URL (`TOUCHSTONE_MDS_URL`, e.g. `https://mds3.fidoalliance.org/`): fetched when due.
    public var url: String?
    /// Roots the BLOB's signing chain must reach: the FIDO Alliance's (GlobalSign Root CA - R3), or those of a PEM
    /// file (`TOUCHSTONE_MDS_ROOTS`, for a private metadata service and for tests).
    public var roots: [Certificate] = MetadataBLOB.fidoRoots
    /// Status reports that refuse a registration (`TOUCHSTONE_MDS_REFUSED_STATUSES`, comma-separated, or `none`).
    public var refusedStatuses: Set<AuthenticatorStatus> = AuthenticatorStatus.compromised
    /// Accept only FIDO-certified authenticators with attestation to their metadata roots
    /// (`TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS`).
    public var requireCertified = false
    /// How often each instance looks for a BLOB stored by another, and checks whether its source is due.
    public var checkInterval: Duration = .seconds(300)
    /// How long after a failed or fruitless fetch the source is tried again (`TOUCHSTONE_MDS_RETRY_SECONDS`).
    public var retryInterval: Duration = .seconds(3600)

    /// The statuses `TOUCHSTONE_MDS_REFUSED_STATUSES` may name (FIDO Metadata Service v3.1 §3.1.4).
    static let knownStatuses: Set<String> = [
        "NOT_FIDO_CERTIFIED", "FIDO_CERTIFIED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE",
        "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE", "UPDATE_AVAILABLE", "REVOKED", "SELF_ASSERTION_SUBMITTED",
        "FIDO_CERTIFIED_L1", "FIDO_CERTIFIED_L1plus", "FIDO_CERTIFIED_L2", "FIDO_CERTIFIED_L2plus", "FIDO_CERTIFIED_L3",
        "FIDO_CERTIFIED_L3plus",
    ]

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        if let path = environment["TOUCHSTONE_MDS_FILE"], !path.isEmpty { self.file = path }
        if let url = environment["TOUCHSTONE_MDS_URL"], !url.isEmpty {
            guard let parsed = URL(string: url), let host = parsed.host, !host.isEmpty,
                parsed.scheme == "https" || (parsed.scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(host))
            else {
                throw ConfigurationError("TOUCHSTONE_MDS_URL", url)
            }
            self.url = url
        }
        if self.file != nil && self.url != nil {
            throw ConfigurationError("TOUCHSTONE_MDS_URL", "set with TOUCHSTONE_MDS_FILE (choose one source)")
        }
        if let path = environment["TOUCHSTONE_MDS_ROOTS"], !path.isEmpty {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8), let roots = RelyingParty.trustAnchors(pem: text) else {
                throw ConfigurationError("TOUCHSTONE_MDS_ROOTS", path)
            }
            self.roots = roots
        }
        if let list = environment["TOUCHSTONE_MDS_REFUSED_STATUSES"] {
            if list.trimmingCharacters(in: .whitespaces) == "none" {
                self.refusedStatuses = []
            } else {
                let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard !names.isEmpty, names.allSatisfy(Self.knownStatuses.contains) else {
                    throw ConfigurationError("TOUCHSTONE_MDS_REFUSED_STATUSES", list)
                }
                self.refusedStatuses = Set(names.map(AuthenticatorStatus.init(rawValue:)))
            }
        }
        if let value = environment["TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS"] {
            guard let flag = Bool(value.lowercased()) else { throw ConfigurationError("TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS", value) }
            self.requireCertified = flag
        }
        if let value = environment["TOUCHSTONE_MDS_RETRY_SECONDS"] {
            guard let seconds = Int(value), (60...86_400).contains(seconds) else { throw ConfigurationError("TOUCHSTONE_MDS_RETRY_SECONDS", value) }
            self.retryInterval = .seconds(seconds)
        }
    }
}
