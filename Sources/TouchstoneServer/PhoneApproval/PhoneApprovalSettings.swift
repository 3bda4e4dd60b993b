public import Foundation

/// Sign-ins approved on a phone (issue #34).
public struct PhoneApprovalSettings: Sendable {
    /// `TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS` (10–600, default 120): how long a request waits for the phone.
    public var requestTTL: TimeInterval = 120
    /// `TOUCHSTONE_PHONE_APPROVAL_LOCK_ON_NOT_ME=on`: a "not me" pauses the account's phone approvals for an hour.
    public var lockOnNotMe = false
    /// How long a "not me" pauses phone approvals.
    public var notMePause: TimeInterval = 3600
    /// Requests pending at once per email address, known or not.
    public var maximumPendingPerAddress = 3
    /// The longest `?wait=` a browser may ask for.
    public var maximumWait = 30
    /// CIBA: the polling interval the client is told, in seconds (`slow_down` below it).
    public var cibaInterval = 5
    /// How long after its expiry an approved request can still be turned into a session or tokens (a poll that was
    /// on its way when the phone approved at the last moment); later, the approval gives nothing.
    public var redemptionGrace: TimeInterval = 30
    /// Apple push: all of `TOUCHSTONE_APNS_KEY_FILE`, `_KEY_ID`, `_TEAM_ID`, `_TOPIC` (and `_ENVIRONMENT`), or none.
    public var apns: APNsSettings?

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        if let value = environment["TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS"] {
            guard let seconds = Int(value), (10...600).contains(seconds) else {
                throw ConfigurationError("TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS", value)
            }
            self.requestTTL = TimeInterval(seconds)
        }
        if let value = environment["TOUCHSTONE_PHONE_APPROVAL_LOCK_ON_NOT_ME"] {
            switch value.lowercased() {
            case "on", "true": self.lockOnNotMe = true
            case "off", "false": self.lockOnNotMe = false
            default: throw ConfigurationError("TOUCHSTONE_PHONE_APPROVAL_LOCK_ON_NOT_ME", value)
            }
        }
        self.apns = try APNsSettings(environment)
    }
}

/// Where and how to send Apple push notifications: a token-based provider key (a `.p8` file) from the Apple
/// developer account.
public struct APNsSettings: Sendable, Hashable {
    public enum Environment: String, Sendable, Hashable {
        case production
        case development

        /// Apple's host for this environment.
        public var host: String { self == .production ? "api.push.apple.com" : "api.sandbox.push.apple.com" }
    }

    /// The PEM text of the provider key (ES256, PKCS #8).
    public var keyPEM: String
    public var keyId: String
    public var teamId: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    public var environment: Environment
    /// `TOUCHSTONE_APNS_URL`: another base URL than Apple's (a local stand-in in tests).
    public var baseURL: String?
    /// `TOUCHSTONE_APNS_CA_FILE`: PEM certificates to trust instead of the system's (for a stand-in or a proxy).
    public var trustRootsPEM: String?

    public init(keyPEM: String, keyId: String, teamId: String, topic: String, environment: Environment, baseURL: String? = nil) {
        self.keyPEM = keyPEM
        self.keyId = keyId
        self.teamId = teamId
        self.topic = topic
        self.environment = environment
        self.baseURL = baseURL
    }

    /// The base URL requests go to.
    public var url: String { self.baseURL ?? "https://\(self.environment.host)" }

    /// Reads the settings; nil when none of them is set; an error naming the first missing or invalid one otherwise.
    init?(_ environment: [String: String]) throws {
        let names = ["TOUCHSTONE_APNS_KEY_FILE", "TOUCHSTONE_APNS_KEY_ID", "TOUCHSTONE_APNS_TEAM_ID", "TOUCHSTONE_APNS_TOPIC"]
        guard names.contains(where: { environment[$0] != nil }) || environment["TOUCHSTONE_APNS_ENVIRONMENT"] != nil else { return nil }
        for name in names where (environment[name] ?? "").isEmpty {
            throw ConfigurationError(name, "(missing: Apple push needs TOUCHSTONE_APNS_KEY_FILE, _KEY_ID, _TEAM_ID and _TOPIC together)")
        }
        let file = environment["TOUCHSTONE_APNS_KEY_FILE"]!
        guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw ConfigurationError("TOUCHSTONE_APNS_KEY_FILE", "\(file) (cannot be read)")
        }
        let keyId = environment["TOUCHSTONE_APNS_KEY_ID"]!, teamId = environment["TOUCHSTONE_APNS_TEAM_ID"]!
        let topic = environment["TOUCHSTONE_APNS_TOPIC"]!
        for (name, value) in [("TOUCHSTONE_APNS_KEY_ID", keyId), ("TOUCHSTONE_APNS_TEAM_ID", teamId)]
        where value.count != 10 || !value.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) {
            throw ConfigurationError(name, "\(value) (10 upper-case letters and digits)")
        }
        guard topic.count <= 255, topic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) else {
            throw ConfigurationError("TOUCHSTONE_APNS_TOPIC", topic)
        }
        let name = environment["TOUCHSTONE_APNS_ENVIRONMENT"] ?? "production"
        guard let kind = Environment(rawValue: name) else { throw ConfigurationError("TOUCHSTONE_APNS_ENVIRONMENT", name) }
        var baseURL = environment["TOUCHSTONE_APNS_URL"]
        if let url = baseURL {
            guard url.hasPrefix("https://") || url.hasPrefix("http://127.0.0.1") || url.hasPrefix("http://localhost") else {
                throw ConfigurationError("TOUCHSTONE_APNS_URL", url)
            }
            if url.hasSuffix("/") { baseURL = String(url.dropLast()) }
        }
        self.init(keyPEM: pem, keyId: keyId, teamId: teamId, topic: topic, environment: kind, baseURL: baseURL)
        if let caFile = environment["TOUCHSTONE_APNS_CA_FILE"] {
            guard let text = try? String(contentsOfFile: caFile, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
                throw ConfigurationError("TOUCHSTONE_APNS_CA_FILE", "\(caFile) (cannot be read as PEM certificates)")
            }
            self.trustRootsPEM = text
        }
    }
}
