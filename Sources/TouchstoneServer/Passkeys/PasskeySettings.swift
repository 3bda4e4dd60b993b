public import Foundation
public import TouchstoneWebAuthn
import TouchstoneCrypto

/// The WebAuthn relying party: who the passkeys are for and what is accepted.
public struct PasskeySettings: Sendable {
    /// The RP ID: the site's registrable domain (`example.com`); `localhost` for local development.
    public var rpId: String = "localhost"
    /// Shown by browsers and password managers.
    public var rpName: String = "Touchstone"
    /// Origins allowed in clientDataJSON; empty means `http://localhost:<port>` (development only). The
    /// `android:apk-key-hash:` origins of ``androidApps`` are added to these.
    public var origins: [String] = []
    /// Other sites that share this relying party's passkeys (WebAuthn Level 3 Related Origin Requests): served in
    /// `/.well-known/webauthn` and accepted in clientDataJSON like ``origins``.
    public var relatedOrigins: [String] = []
    /// Apps that may use the relying party's passkeys on iOS and macOS (`TEAMID.bundle.identifier`): served in
    /// `/.well-known/apple-app-site-association` as `webcredentials`.
    public var appleAppIds: [String] = []
    /// Android apps that may use them: served in `/.well-known/assetlinks.json`, and their signing certificates'
    /// `android:apk-key-hash:` origins are accepted.
    public var androidApps: [AndroidApp] = []
    /// Allow ceremonies inside cross-origin iframes (and from these top-level origins, if any are listed).
    public var allowCrossOrigin: Bool = false
    public var allowedTopOrigins: [String] = []
    public var userVerification: UserVerificationRequirement = .preferred
    /// Attestation conveyance asked of browsers: `none`, `indirect`, `direct` or `enterprise`.
    public var attestation: String = "none"
    /// The weakest attestation accepted (`none`, `self`, `basic`...); `basic` or stronger needs trust anchors.
    public var minimumAttestation: AttestationType = .none
    /// PEM files of attestation roots.
    public var trustAnchorFiles: [String] = []
    public var algorithms: [COSEAlgorithm] = COSEAlgorithm.recommended
    /// Refuse assertions whose signature counter did not increase (otherwise they are accepted and counted as clone
    /// warnings).
    public var rejectCounterRegression: Bool = false
    /// `hints` of the ceremony options when a request names none (`TOUCHSTONE_PASSKEY_HINTS`: `security-key`,
    /// `client-device`, `hybrid`, most preferred first).
    public var hints: [String] = []
    /// How long a passkey ceremony may take (the browser's `timeout` and the challenge lifetime).
    public var timeout: Duration = .seconds(300)

    public init() {}

    /// Reads the relying party's variables (`TOUCHSTONE_RP_ID`, `TOUCHSTONE_ORIGINS`, the apps, attestation, algorithms...).
    mutating func read(_ environment: [String: String]) throws {
        if let rpId = environment["TOUCHSTONE_RP_ID"] { self.rpId = rpId }
        if let rpName = environment["TOUCHSTONE_RP_NAME"] { self.rpName = rpName }
        if let origins = environment["TOUCHSTONE_ORIGINS"] {
            self.origins = origins.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let list = environment["TOUCHSTONE_RELATED_ORIGINS"] {
            let origins = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard origins.count <= 100, origins.allSatisfy(TouchstoneConfiguration.isWebOrigin) else { throw ConfigurationError("TOUCHSTONE_RELATED_ORIGINS", list) }
            self.relatedOrigins = origins
        }
        if let list = environment["TOUCHSTONE_PASSKEY_HINTS"] {
            let hints = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard (try? PasskeyHint.parse(hints, field: "hints")) != nil else { throw ConfigurationError("TOUCHSTONE_PASSKEY_HINTS", list) }
            self.hints = hints
        }
        if let list = environment["TOUCHSTONE_APPLE_APP_IDS"] {
            let ids = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard ids.allSatisfy(AndroidApp.isAppleAppId) else { throw ConfigurationError("TOUCHSTONE_APPLE_APP_IDS", list) }
            self.appleAppIds = ids
        }
        if let list = environment["TOUCHSTONE_ANDROID_APPS"] {
            let entries = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let apps = entries.map(AndroidApp.init(parsing:))
            guard apps.allSatisfy({ $0 != nil }) else { throw ConfigurationError("TOUCHSTONE_ANDROID_APPS", list) }
            self.androidApps = apps.compactMap { $0 }
        }
        if let value = environment["TOUCHSTONE_USER_VERIFICATION"] {
            guard let requirement = UserVerificationRequirement(rawValue: value) else {
                throw ConfigurationError("TOUCHSTONE_USER_VERIFICATION", value)
            }
            self.userVerification = requirement
        }
        if let value = environment["TOUCHSTONE_ATTESTATION"] {
            guard ["none", "indirect", "direct", "enterprise"].contains(value) else { throw ConfigurationError("TOUCHSTONE_ATTESTATION", value) }
            self.attestation = value
        }
        if let value = environment["TOUCHSTONE_MINIMUM_ATTESTATION"] {
            guard let type = AttestationType(rawValue: value) else { throw ConfigurationError("TOUCHSTONE_MINIMUM_ATTESTATION", value) }
            self.minimumAttestation = type
        }
        if let list = environment["TOUCHSTONE_PASSKEY_ALGORITHMS"] {
            let names = Dictionary(uniqueKeysWithValues: COSEAlgorithm.allCases.map { ($0.name, $0) })
            let values = list.split(separator: ",").map { names[$0.trimmingCharacters(in: .whitespaces)] }
            guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { throw ConfigurationError("TOUCHSTONE_PASSKEY_ALGORITHMS", list) }
            self.algorithms = values.compactMap { $0 }
        }
        if let value = environment["TOUCHSTONE_REJECT_COUNTER_REGRESSION"] {
            guard let flag = Bool(value.lowercased()) else { throw ConfigurationError("TOUCHSTONE_REJECT_COUNTER_REGRESSION", value) }
            self.rejectCounterRegression = flag
        }
        if let value = environment["TOUCHSTONE_ALLOW_CROSS_ORIGIN"] {
            guard let flag = Bool(value.lowercased()) else { throw ConfigurationError("TOUCHSTONE_ALLOW_CROSS_ORIGIN", value) }
            self.allowCrossOrigin = flag
        }
        if let list = environment["TOUCHSTONE_TOP_ORIGINS"] {
            self.allowedTopOrigins = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if let files = environment["TOUCHSTONE_TRUST_ANCHORS"] {
            self.trustAnchorFiles = files.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }
}

/// An Android app allowed to use the relying party's passkeys: its package and the SHA-256 fingerprint of its signing
/// certificate (32 bytes).
public struct AndroidApp: Sendable, Hashable {
    public var packageName: String
    public var certificateSHA256: [UInt8]

    public init(packageName: String, certificateSHA256: [UInt8]) {
        self.packageName = packageName
        self.certificateSHA256 = certificateSHA256
    }

    /// `com.example.app:14:6D:E9:...` (the package, a colon, and the fingerprint as `keytool -list -v` prints it, or as
    /// 64 hex digits).
    public init?(parsing text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let package = String(text[..<colon])
        let hex = text[text.index(after: colon)...].filter { $0 != ":" }
        guard Self.isPackageName(package), hex.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(packageName: package, certificateSHA256: bytes)
    }

    /// The fingerprint as assetlinks.json writes it: uppercase hex pairs separated by colons.
    public var fingerprint: String {
        self.certificateSHA256.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }

    /// The origin Android reports in clientDataJSON for this app: `android:apk-key-hash:` and base64url of the
    /// certificate's SHA-256, unpadded.
    public var origin: String { "android:apk-key-hash:" + Base64.urlEncode(self.certificateSHA256) }

    static func isPackageName(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && parts.allSatisfy { part in
            guard let first = part.first, first.isASCII, first.isLetter else { return false }
            return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        }
    }

    /// `TEAMID.bundle.identifier`: a 10-character team id, then a bundle id.
    static func isAppleAppId(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else { return false }
        return parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") } && !parts[1].isEmpty
    }
}
