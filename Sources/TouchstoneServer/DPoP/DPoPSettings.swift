/// DPoP (RFC 9449): whether the server demands its nonces in proofs, and how old a proof may be
/// (`TOUCHSTONE_DPOP_NONCE`, `TOUCHSTONE_DPOP_PROOF_MAX_AGE_SECONDS`).
public struct DPoPSettings: Sendable, Hashable {
    /// Proofs must carry a nonce this server issued (RFC 9449 §8, §9): a proof made in advance, or kept by malware
    /// for later, is then refused. Off by default (each request without a nonce costs a round trip the first time).
    public var requireNonce = false
    /// How old a proof may be (its `iat`); the `jti` of accepted proofs are kept this long. 5 to 300 seconds.
    public var proofMaximumAge: Duration = .seconds(60)
    /// How far ahead of the server's clock a proof's `iat` may be.
    public var allowedClockSkew: Duration = .seconds(5)

    public init() {}

    mutating func read(_ environment: [String: String]) throws {
        if let value = environment["TOUCHSTONE_DPOP_NONCE"] {
            switch value.lowercased() {
            case "on", "true", "1": self.requireNonce = true
            case "off", "false", "0": self.requireNonce = false
            default: throw ConfigurationError("TOUCHSTONE_DPOP_NONCE", value)
            }
        }
        if let value = environment["TOUCHSTONE_DPOP_PROOF_MAX_AGE_SECONDS"] {
            guard let seconds = Int(value), (5...300).contains(seconds) else {
                throw ConfigurationError("TOUCHSTONE_DPOP_PROOF_MAX_AGE_SECONDS", value)
            }
            self.proofMaximumAge = .seconds(seconds)
        }
    }
}
