/// The `scope` parameter (RFC 6749 §3.3): space-separated scope tokens, case-sensitive, in the order asked.
public enum Scopes {
    /// The scopes the provider knows (OpenID Connect Core §5.4 and §11).
    public static let supported: [String] = ["openid", "email", "profile", "offline_access"]

    /// Parses `text` into its distinct tokens in order; every token must be one of `known`.
    ///
    /// - Throws: `invalid_scope` for an empty token (two spaces, a leading or trailing space), a character a scope
    ///   token cannot have (`"`, `\`, controls, non-ASCII), or a scope the provider does not know (named).
    public static func parse(_ text: String, known: [String] = Scopes.supported) throws(OpenIDError) -> [String] {
        guard !text.isEmpty else { throw .invalidScope("scope is empty") }
        var scopes: [String] = []
        for token in text.split(separator: " ", omittingEmptySubsequences: false) {
            guard !token.isEmpty else { throw .invalidScope("scope has an empty token (two spaces, or one at either end)") }
            // scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
            guard token.utf8.allSatisfy({ $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }) else {
                throw .invalidScope("scope has a character a scope token cannot have")
            }
            let scope = String(token)
            guard known.contains(scope) else { throw .invalidScope("unknown scope '\(scope)'") }
            if !scopes.contains(scope) { scopes.append(scope) }
        }
        return scopes
    }
}
