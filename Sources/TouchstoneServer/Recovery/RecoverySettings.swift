public import Foundation

/// Verified addresses and the ways back into an account (issue #33).
public struct RecoverySettings: Sendable {
    /// `TOUCHSTONE_EMAIL_VERIFICATION_TTL_SECONDS` (60–604800, default 86400): how long a verification code and link work.
    public var verificationTTL: TimeInterval = 86_400
    /// `TOUCHSTONE_PASSWORD_RESET_TTL_SECONDS` (60–86400, default 900).
    public var passwordResetTTL: TimeInterval = 900
    /// `TOUCHSTONE_EMAIL_CODE_TTL_SECONDS` (60–3600, default 600): sign-in codes.
    public var emailCodeTTL: TimeInterval = 600
    /// `TOUCHSTONE_REQUIRE_VERIFIED_EMAIL=on`: devices and passkeys are enrolled only on accounts with a verified address.
    public var requireVerifiedEmail = false
    /// `TOUCHSTONE_EMAIL_CODES=off` turns sign-in by mailed code off (on by default).
    public var emailCodes = true
    /// Wrong codes that end a mailed code (its challenge is deleted; a new one must be asked for).
    public var maximumCodeAttempts = 5

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        func seconds(_ name: String, _ range: ClosedRange<Int>) throws -> TimeInterval? {
            guard let value = environment[name] else { return nil }
            guard let seconds = Int(value), range.contains(seconds) else { throw ConfigurationError(name, value) }
            return TimeInterval(seconds)
        }
        func flag(_ name: String) throws -> Bool? {
            guard let value = environment[name] else { return nil }
            switch value.lowercased() {
            case "on", "true": return true
            case "off", "false": return false
            default: throw ConfigurationError(name, value)
            }
        }
        if let ttl = try seconds("TOUCHSTONE_EMAIL_VERIFICATION_TTL_SECONDS", 60...604_800) { self.verificationTTL = ttl }
        if let ttl = try seconds("TOUCHSTONE_PASSWORD_RESET_TTL_SECONDS", 60...86_400) { self.passwordResetTTL = ttl }
        if let ttl = try seconds("TOUCHSTONE_EMAIL_CODE_TTL_SECONDS", 60...3_600) { self.emailCodeTTL = ttl }
        if let on = try flag("TOUCHSTONE_REQUIRE_VERIFIED_EMAIL") { self.requireVerifiedEmail = on }
        if let on = try flag("TOUCHSTONE_EMAIL_CODES") { self.emailCodes = on }
    }
}
