import Testing
import TouchstoneOpenID

/// The `scope` parameter (issue #31, §3: `invalid_scope` for a scope the provider does not know).
struct ScopesTests {
    @Test func knownScopesParseInOrderWithoutRepeats() throws {
        #expect(try Scopes.parse("openid email") == ["openid", "email"])
        #expect(try Scopes.parse("profile openid profile offline_access") == ["profile", "openid", "offline_access"])
    }

    @Test(arguments: ["", " openid", "openid ", "openid  email", "openid admin", "OpenID", "openid\temail", "openid \"x\"", "openid é"])
    func malformedOrUnknownScopesAreInvalidScope(text: String) {
        #expect(throws: OpenIDError.invalidScope("")) { try Scopes.parse(text) }
    }

    @Test func theUnknownScopeIsNamed() {
        do {
            _ = try Scopes.parse("openid payments")
            Issue.record("accepted an unknown scope")
        } catch {
            #expect(error.reason == "unknown scope 'payments'")
        }
    }
}
