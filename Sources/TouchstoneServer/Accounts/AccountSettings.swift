import Foundation

/// Who may create accounts.
public struct AccountSettings: Sendable {
    /// `TOUCHSTONE_SIGN_UP=on|off` (default on): off refuses every sign-up route with 403 `sign_up_disabled` and hides
    /// the web page's sign-up, for an organisation that provisions its users itself.
    public var signUp = true

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        if let value = environment["TOUCHSTONE_SIGN_UP"] {
            switch value.lowercased() {
            case "on", "true": self.signUp = true
            case "off", "false": self.signUp = false
            default: throw ConfigurationError("TOUCHSTONE_SIGN_UP", value)
            }
        }
    }
}
