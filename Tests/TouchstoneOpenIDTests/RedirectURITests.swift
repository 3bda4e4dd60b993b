import Testing
import TouchstoneOpenID

/// Redirect URIs a client may register (issue #31, §1), and the comparison an authorization request passes (§3).
struct RedirectURITests {
    @Test(arguments: [
        "https://app.example.com/callback",
        "https://app.example.com:8443/cb?tenant=1",
        "http://127.0.0.1/cb",
        "http://127.0.0.1:53172/cb",
        "http://[::1]:8080/oauth2/callback",
        "http://localhost:3000/api/auth/callback",
        "com.example.app:/oauth2redirect",
        "com.example.app://callback",
        "HTTPS://App.Example.com/cb",
    ])
    func acceptedAtRegistration(uri: String) throws {
        #expect(try RedirectURI(validating: uri).value == uri)
    }

    @Test(arguments: [
        ("", "empty"),
        ("/callback", "absolute"),
        ("app.example.com/callback", "absolute"),
        ("https://app.example.com/cb#frag", "fragment"),
        ("https://app.example.com/cb#", "fragment"),
        ("http://app.example.com/cb", "loopback"),
        ("http://10.0.0.1/cb", "loopback"),
        ("http://127.0.0.1.example.com/cb", "loopback"),
        ("https:///cb", "host"),
        ("https:cb", "host"),
        ("https://user:pass@app.example.com/cb", "user information"),
        ("https://app.example.com:99999999/cb", "host"),
        ("javascript:alert(1)", "scheme"),
        ("data:text/html,hi", "scheme"),
        ("myapp:/callback", "scheme"),
        ("com.example.app:", "nothing after"),
        (".example:/cb", "scheme"),
        ("https://app.example.com/c b", "white space"),
        ("https://app.example.com/\u{0}", "control"),
        ("1https://x", "absolute"),
    ])
    func refusedAtRegistrationWithAReason(uri: String, says: String) {
        #expect(throws: OpenIDError.invalidRedirectURI("")) { try RedirectURI(validating: uri) }
        do {
            _ = try RedirectURI(validating: uri)
        } catch {
            #expect(error.code == "invalid_redirect_uri")
            #expect(error.reason.contains(says), "\(uri): \(error.reason)")
        }
    }

    @Test func tooLongIsRefused() {
        let uri = "https://app.example.com/" + String(repeating: "a", count: RedirectURI.maximumLength)
        #expect(throws: OpenIDError.invalidRedirectURI("")) { try RedirectURI(validating: uri) }
    }

    @Test func aRequestMustNameTheRegisteredURIExactly() throws {
        let registered = try RedirectURI(validating: "https://app.example.com/callback")
        #expect(registered.matches("https://app.example.com/callback"))
        for other in [
            "https://app.example.com/callback/", "https://app.example.com/Callback", "https://APP.example.com/callback",
            "https://app.example.com/callback?x=1", "https://app.example.com:443/callback", "http://app.example.com/callback",
            "https://app.example.com/callback#x", "https://app.example.com.evil.example/callback",
        ] {
            #expect(!registered.matches(other), "\(other)")
        }
    }

    /// RFC 8252 §7.3: the port of a loopback IP literal may differ; nothing else may, and `localhost` gets no leeway.
    @Test func aLoopbackIPLiteralMayComeBackOnAnotherPort() throws {
        let v4 = try RedirectURI(validating: "http://127.0.0.1/cb")
        #expect(v4.matches("http://127.0.0.1:51004/cb"))
        #expect(v4.matches("http://127.0.0.1:1/cb"))
        #expect(!v4.matches("http://127.0.0.1:51004/other"))
        #expect(!v4.matches("http://127.0.0.1:51004/cb/x"))
        #expect(!v4.matches("http://127.0.0.1:abc/cb"))
        #expect(!v4.matches("http://127.0.0.10:51004/cb"))
        let withPort = try RedirectURI(validating: "http://[::1]:8080/cb?a=1")
        #expect(withPort.matches("http://[::1]:9090/cb?a=1"))
        #expect(withPort.matches("http://[::1]/cb?a=1"))
        #expect(!withPort.matches("http://[::1]:9090/cb?a=2"))
        #expect(!withPort.matches("http://127.0.0.1:8080/cb?a=1"))
        let localhost = try RedirectURI(validating: "http://localhost:3000/cb")
        #expect(localhost.matches("http://localhost:3000/cb"))
        #expect(!localhost.matches("http://localhost:3001/cb"))
    }
}
