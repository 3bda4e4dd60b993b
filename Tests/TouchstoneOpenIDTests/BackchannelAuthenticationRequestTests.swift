import Testing
import TouchstoneOpenID

/// CIBA authentication requests (Core 1.0 §7.1) as the provider reads them.
struct BackchannelAuthenticationRequestTests {
    static func read(_ query: String) throws(OpenIDError) -> BackchannelAuthenticationRequest {
        try BackchannelAuthenticationRequest(try FormParameters(urlEncoded: query), expiries: 10...600)
    }

    @Test func aFullRequest() throws {
        let request = try Self.read("scope=openid%20email&login_hint=a%40example.com&binding_message=Pay%20%E2%82%AC20&requested_expiry=60")
        #expect(request.scopes == ["openid", "email"])
        #expect(request.loginHint == "a@example.com")
        #expect(request.bindingMessage == "Pay €20")
        #expect(request.requestedExpiry == 60)
        let minimal = try Self.read("scope=openid&login_hint=u1")
        #expect(minimal.bindingMessage == nil && minimal.requestedExpiry == nil)
    }

    @Test func aMessageOfSixtyCharactersIsTheLongest() throws {
        // Characters, not bytes: sixty euro signs are 180 bytes.
        let sixty = String(repeating: "%E2%82%AC", count: 60)
        #expect(try Self.read("scope=openid&login_hint=u&binding_message=\(sixty)").bindingMessage?.count == 60)
        #expect(throws: OpenIDError.invalidBindingMessage("")) { try Self.read("scope=openid&login_hint=u&binding_message=\(sixty)x") }
    }

    @Test(arguments: [
        ("login_hint=u", OpenIDError.invalidRequest("")),
        ("scope=email&login_hint=u", .invalidScope("")),
        ("scope=openid%20unknown&login_hint=u", .invalidScope("")),
        ("scope=openid", .invalidRequest("")),
        ("scope=openid&login_hint_token=t", .invalidRequest("")),
        ("scope=openid&id_token_hint=t&login_hint=u", .invalidRequest("")),
        ("scope=openid&login_hint=u&user_code=1", .invalidRequest("")),
        ("scope=openid&login_hint=u&login_hint=v", .invalidRequest("")),
        ("scope=openid&login_hint=u&binding_message=a%E2%80%8Bb", .invalidBindingMessage("")),
        ("scope=openid&login_hint=u&requested_expiry=9", .invalidRequest("")),
        ("scope=openid&login_hint=u&requested_expiry=601", .invalidRequest("")),
        ("scope=openid&login_hint=u&requested_expiry=-5", .invalidRequest("")),
        ("scope=openid&login_hint=u&requested_expiry=1e2", .invalidRequest("")),
    ])
    func refusals(query: String, error: OpenIDError) {
        #expect(throws: error) { try Self.read(query) }
    }
}
