public import Foundation
public import TouchstoneWebAuthn
public import X509

/// Apple App Attest: which apps' keys are accepted, and whether enrolment requires a proof.
public struct AppAttestSettings: Sendable {
    /// App IDs (`TEAMID.bundle.identifier`) whose keys are accepted; empty turns App Attest off.
    public var appIds: [String] = []
    public var environment: AppAttestVerifier.Environment = .production
    /// Whether `registrations/start` requires an App Attest assertion (`requireAppAttest`).
    public var required = false
    /// Roots for the credential certificates: Apple's App Attestation Root CA (tests use their own).
    public var trustAnchors: [Certificate] = AppAttestVerifier.appleRoots

    public init() {}

    /// Reads `TOUCHSTONE_APP_ATTEST_APP_IDS`, `TOUCHSTONE_APP_ATTEST_ENVIRONMENT` and `TOUCHSTONE_REQUIRE_APP_ATTEST`.
    mutating func read(_ environment: [String: String]) throws {
        if let list = environment["TOUCHSTONE_APP_ATTEST_APP_IDS"] {
            self.appIds = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let value = environment["TOUCHSTONE_APP_ATTEST_ENVIRONMENT"] {
            guard let parsed = AppAttestVerifier.Environment(rawValue: value) else {
                throw ConfigurationError("TOUCHSTONE_APP_ATTEST_ENVIRONMENT", value)
            }
            self.environment = parsed
        }
        if let value = environment["TOUCHSTONE_REQUIRE_APP_ATTEST"] {
            guard let required = Bool(value) else { throw ConfigurationError("TOUCHSTONE_REQUIRE_APP_ATTEST", value) }
            self.required = required
        }
        if self.required && self.appIds.isEmpty {
            throw ConfigurationError("TOUCHSTONE_REQUIRE_APP_ATTEST", "true without TOUCHSTONE_APP_ATTEST_APP_IDS")
        }
    }
}

/// Android Keystore key attestation: an enrolment may carry (or must, when required) the attestation chain of its key.
public struct AndroidKeyAttestationSettings: Sendable {
    /// Whether `registrations/start` requires `keyAttestation` (`TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION`).
    public var required = false
    /// Roots the chains must lead to: Google's hardware attestation roots.
    public var trustAnchors: [Certificate] = AndroidKeyAttestationVerifier.googleRoots
    /// A PEM file whose roots replace Google's (`TOUCHSTONE_ANDROID_ATTESTATION_ROOTS`): for tests and private
    /// device fleets, never needed for phones from a store.
    public var rootsFile: String?
    /// A copy of Google's attestation status list (`TOUCHSTONE_ANDROID_ATTESTATION_STATUS_FILE`), re-read when it
    /// changes; enrolments fail with 503 while it cannot be read.
    public var statusFile: String?

    public init() {}

    /// Reads `TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION` and `TOUCHSTONE_ANDROID_ATTESTATION_*`.
    mutating func read(_ environment: [String: String]) throws {
        if let value = environment["TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION"] {
            guard let required = Bool(value) else { throw ConfigurationError("TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION", value) }
            self.required = required
        }
        if let path = environment["TOUCHSTONE_ANDROID_ATTESTATION_ROOTS"], !path.isEmpty {
            self.rootsFile = path
        }
        if let path = environment["TOUCHSTONE_ANDROID_ATTESTATION_STATUS_FILE"], !path.isEmpty {
            self.statusFile = path
        }
    }
}
