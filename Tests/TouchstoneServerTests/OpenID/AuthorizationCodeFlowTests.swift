import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneOpenID
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// The authorization code flow through the sign-in and consent pages, the token endpoint and UserInfo (issue #31,
/// §3-§5).
struct AuthorizationCodeFlowTests {
    static let password = "correct horse battery"

    /// Signs a user up through the v1 API; returns the email.
    static func signUp(_ client: any TestClientProtocol, name: String? = "Ada Lovelace") async throws -> (email: String, userId: String) {
        let email = "user-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        var body: [String: any Sendable] = ["email": email, "password": Self.password]
        if let name { body["displayName"] = name }
        let response = try await client.request(.post, "/v1/users", json: body)
        try #require(response.status == .created)
        return (email, try #require(response.value("user", "id")))
    }

    /// Runs the browser through sign-in (and consent when asked) to the redirect with the code.
    static func signInAndAllow(_ browser: inout OpenIDBrowser, _ uri: String, email: String) async throws -> OpenIDBrowser.Page {
        let page = try await browser.get(uri)
        if page.status == .found { return page }  // already signed in and allowed
        try #require(page.status == .ok, "\(page.status) \(page.html)")
        var next = try await browser.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", email), ("password", Self.password)])
        if next.status == .ok, next.html.contains("value=\"consent\"") {
            next = try await browser.post("/oauth2/authorize", form: next.form(action: "consent") + [("decision", "allow")])
        }
        return next
    }

    static func exchange(_ client: any TestClientProtocol, _ app: OpenIDTestClient, code: String, verifier: String) async throws -> JSONTestResponse {
        try await client.form(
            "/oauth2/token",
            "grant_type=authorization_code&code=\(code)&redirect_uri=\(OpenIDBrowser.encode(app.redirectURI))&code_verifier=\(verifier)"
                + app.publicClientParameter,
            headers: app.headers
        )
    }

    @Test func aThirdPartyClientGetsCodeTokensIDTokenAndUserInfo() async throws {
        try await TestServer.runWithAdminKey { client, key, store in
            let app = try await client.registerClient(key: key)
            let (email, userId) = try await Self.signUp(client)
            var browser = OpenIDBrowser(client)
            let (uri, verifier, state) = app.authorize()

            // The sign-in page: accessible names, CSRF cookie, never framed, never cached.
            let page = try await browser.get(uri)
            #expect(page.status == .ok)
            #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(page.html.contains("<label for=\"email\">Email</label>") && page.html.contains("<label for=\"password\">Password</label>"))
            #expect(page.html.contains(">Sign in</button>") && page.html.contains(">Sign in with a passkey</button>"))
            // The ways in without a password, and account creation, in this tab (the authorization request rides along).
            #expect(page.html.contains(">Forgot password?</button>") && page.html.contains(">Email me a code</button>"))
            #expect(page.html.contains("<details id=\"create-account\">"))
            #expect(browser.cookies.keys.contains("touchstone_csrf"))  // plain-http loopback issuer: no __Host- prefix

            let consent = try await browser.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", email), ("password", Self.password)])
            #expect(consent.status == .ok)
            #expect(consent.html.contains(">Allow</button>") && consent.html.contains(">Deny</button>") && consent.html.contains("Test app"))
            let session = try #require(browser.cookies["touchstone_session"])
            let done = try await browser.post("/oauth2/authorize", form: consent.form(action: "consent") + [("decision", "allow")])
            #expect(done.status == .found)
            let location = try #require(done.location)
            #expect(location.hasPrefix("https://app.example.com/cb?"))
            let query = OpenIDBrowser.query(location)
            #expect(query["state"] == state)
            #expect(query["iss"] == "http://localhost:0")
            let code = try #require(query["code"])
            #expect(code.count >= 43)

            let tokens = try await Self.exchange(client, app, code: code, verifier: verifier)
            #expect(tokens.status == .ok, "\(String(decoding: tokens.body, as: UTF8.self))")
            #expect(tokens.headers[.cacheControl] == "no-store")
            #expect(tokens.value("token_type") == "Bearer")
            #expect(tokens.value("scope") == "openid email profile offline_access")
            let access = try #require(tokens.value("access_token"))
            let idToken = try #require(tokens.value("id_token"))
            #expect(tokens.value("refresh_token") != nil)

            let claims = jwtPayload(idToken)
            #expect(claims["iss"] as? String == "http://localhost:0")
            #expect(claims["sub"] as? String == userId)
            #expect(claims["aud"] as? String == app.id)
            #expect(claims["nonce"] as? String == "n-1")
            #expect(claims["email"] as? String == email)
            #expect(claims["email_verified"] as? Bool == false)
            #expect(claims["name"] as? String == "Ada Lovelace")
            #expect(claims["amr"] as? [String] == ["pwd"])
            #expect(claims["sid"] is String && claims["auth_time"] is Int)
            let accessClaims = jwtPayload(access)
            #expect(accessClaims["client_id"] as? String == app.id)
            #expect(accessClaims["scope"] as? String == "openid email profile offline_access")
            #expect((accessClaims["aud"] as? [String])?.contains(app.id) == true)
            #expect(accessClaims["sid"] as? String == claims["sid"] as? String)

            let info = try await client.request(.get, "/oauth2/userinfo", token: access)
            #expect(info.status == .ok)
            #expect(info.value("sub") == userId && info.value("email") == email && info.value("name") == "Ada Lovelace")

            // The browser session is an ordinary Touchstone session: listed, and usable as a bearer token.
            let current = try await client.request(.get, "/v1/session", token: session)
            #expect(current.status == .ok)
            // Consent is remembered: the next authorization goes straight back with a code.
            let again = try await browser.get(app.authorize().uri)
            #expect(again.status == .found)
            #expect(OpenIDBrowser.query(again.location ?? "")["code"] != nil)

            // Once the address is verified (a mailed code; here the store, as the code would), ID tokens and userinfo
            // say so.
            #expect(try await store.markEmailVerified(userId: userId, email: email, at: Date()))
            let (uri2, verifier2, _) = app.authorize()
            let verified = try await browser.get(uri2)
            let code2 = try #require(OpenIDBrowser.query(verified.location ?? "")["code"])
            let tokens2 = try await Self.exchange(client, app, code: code2, verifier: verifier2)
            #expect(jwtPayload(try #require(tokens2.value("id_token")))["email_verified"] as? Bool == true)
            let info2 = try await client.request(.get, "/oauth2/userinfo", token: try #require(tokens2.value("access_token")))
            #expect(info2.any(["email_verified"]) as? Bool == true)
        }
    }

    @Test func aFirstPartyPublicClientSkipsConsentAndUsesPKCEAlone() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key, redirectURI: "http://127.0.0.1:8765/cb", isPublic: true, firstParty: true)
            let (email, _) = try await Self.signUp(client)
            var browser = OpenIDBrowser(client)
            // RFC 8252 §7.3: a loopback IP redirect URI may come back on another port.
            var request = app
            request.redirectURI = "http://127.0.0.1:51000/cb"
            let (uri, verifier, _) = request.authorize(scope: "openid")
            let done = try await Self.signInAndAllow(&browser, uri, email: email)
            #expect(done.status == .found)
            let code = try #require(OpenIDBrowser.query(done.location ?? "")["code"])
            #expect(done.location?.hasPrefix("http://127.0.0.1:51000/cb?") == true)
            let tokens = try await Self.exchange(client, request, code: code, verifier: verifier)
            #expect(tokens.status == .ok, "\(String(decoding: tokens.body, as: UTF8.self))")
            #expect(tokens.value("refresh_token") == nil)  // no offline_access
            #expect(jwtPayload(tokens.value("id_token") ?? "")["email"] == nil)  // no email scope
        }
    }

    @Test func aCodeIsSingleUseAndAReplayRevokesItsTokens() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            let (email, _) = try await Self.signUp(client)
            var browser = OpenIDBrowser(client)
            let (uri, verifier, _) = app.authorize()
            let code = try #require(OpenIDBrowser.query(try await Self.signInAndAllow(&browser, uri, email: email).location ?? "")["code"])
            let first = try await Self.exchange(client, app, code: code, verifier: verifier)
            #expect(first.status == .ok)
            let access = try #require(first.value("access_token"))
            let refresh = try #require(first.value("refresh_token"))
            #expect(try await client.request(.get, "/oauth2/userinfo", token: access).status == .ok)

            let replay = try await Self.exchange(client, app, code: code, verifier: verifier)
            #expect(replay.status == .badRequest)
            #expect(replay.value("error") == "invalid_grant")
            #expect(replay.headers[.cacheControl] == "no-store")
            let refused = try await client.request(.get, "/oauth2/userinfo", token: access)
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.wwwAuthenticate]?.contains("error=\"invalid_token\"") == true)
            let refreshed = try await client.form("/oauth2/token", "grant_type=refresh_token&refresh_token=\(refresh)", headers: app.headers)
            #expect(refreshed.value("error") == "invalid_grant")
        }
    }

    @Test func codesAreBoundToClientRedirectVerifierAndSixtySeconds() async throws {
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(clock: clock) { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            let other = try await client.registerClient(key: key, name: "Other", firstParty: true)
            let (email, _) = try await Self.signUp(client)
            var browser = OpenIDBrowser(client)
            func code() async throws -> (String, String) {
                let (uri, verifier, _) = app.authorize()
                let done = try await Self.signInAndAllow(&browser, uri, email: email)
                return (try #require(OpenIDBrowser.query(done.location ?? "")["code"]), verifier)
            }
            // Another client.
            var (value, verifier) = try await code()
            var other2 = other
            other2.redirectURI = app.redirectURI
            #expect(try await Self.exchange(client, other2, code: value, verifier: verifier).value("error") == "invalid_grant")
            // Another redirect URI.
            (value, verifier) = try await code()
            var elsewhere = app
            elsewhere.redirectURI = "https://app.example.com/other"
            #expect(try await Self.exchange(client, elsewhere, code: value, verifier: verifier).value("error") == "invalid_grant")
            // A wrong verifier.
            (value, _) = try await code()
            let wrong = try await Self.exchange(client, app, code: value, verifier: String(repeating: "w", count: 50))
            #expect(wrong.value("error") == "invalid_grant")
            #expect(wrong.value("error_description")?.contains("code_verifier") == true)
            // Expired after 60 seconds.
            (value, verifier) = try await code()
            clock.advance(by: 61)
            let expired = try await Self.exchange(client, app, code: value, verifier: verifier)
            #expect(expired.value("error") == "invalid_grant")
            #expect(expired.value("error_description")?.contains("expired") == true)
            // Unknown.
            #expect(try await Self.exchange(client, app, code: "nope", verifier: verifier).value("error") == "invalid_grant")
        }
    }

    @Test func anHTTPSIssuerGetsHostPrefixedSecureCookies() async throws {
        let configuration = TestServer.configuration { $0.tokens.issuer = "https://id.example.com" }
        try await TestServer.runWithAdminKey(configuration: configuration) { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            let (email, _) = try await Self.signUp(client)
            var browser = OpenIDBrowser(client)
            let page = try await browser.get(app.authorize().uri)
            let csrf = try #require(page.headers[values: .setCookie].first)
            #expect(csrf.hasPrefix("__Host-touchstone_csrf=") && csrf.hasSuffix("; Path=/; HttpOnly; SameSite=Lax; Secure"))
            let done = try await browser.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", email), ("password", Self.password)])
            let session = try #require(done.headers[values: .setCookie].first { $0.hasPrefix("__Host-touchstone_session=") })
            #expect(session.contains("; Path=/; HttpOnly; SameSite=Lax; Max-Age=") && session.hasSuffix("; Secure"))
            #expect(OpenIDBrowser.query(done.location ?? "")["iss"] == "https://id.example.com")
        }
    }
}
