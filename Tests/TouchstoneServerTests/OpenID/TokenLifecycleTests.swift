import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TouchstoneOpenID
import TouchstoneServer
import TouchstoneTesting

/// Refresh rotation and reuse, revocation, introspection, grants, logout and back-channel logout (issue #31, §4-§5).
struct TokenLifecycleTests {
    typealias Flow = AuthorizationCodeFlowTests

    /// Back-channel logout tokens as a client would receive them.
    final class Receiver: Sendable {
        let posts = NIOLockedValueBox<[(String, String)]>([])
        let status = NIOLockedValueBox<Int>(200)
        let stream: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation

        init() {
            (self.stream, self.continuation) = AsyncStream.makeStream()
        }

        var post: @Sendable (String, String) async throws -> Int {
            { url, body in
                self.posts.withLockedValue { $0.append((url, body)) }
                self.continuation.yield()
                return self.status.withLockedValue { $0 }
            }
        }

        /// Waits for the next delivery attempt (the server's delivery loop runs every second); false when none came
        /// within 20 seconds (a safety net against a hung test, not a timing assertion).
        @discardableResult
        func next() async -> Bool {
            let stream = self.stream
            return await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    var iterator = stream.makeAsyncIterator()
                    return await iterator.next() != nil
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(20))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }
    }

    static func tokens(
        _ client: any TestClientProtocol, _ app: OpenIDTestClient, _ browser: inout OpenIDBrowser, email: String,
        scope: String = "openid email profile offline_access"
    ) async throws -> JSONTestResponse {
        let (uri, verifier, _) = app.authorize(scope: scope)
        let done = try await Flow.signInAndAllow(&browser, uri, email: email)
        let code = try #require(OpenIDBrowser.query(done.location ?? "")["code"], "\(done.status) \(done.html)")
        let tokens = try await Flow.exchange(client, app, code: code, verifier: verifier)
        try #require(tokens.status == .ok, "\(String(decoding: tokens.body, as: UTF8.self))")
        return tokens
    }

    static func refresh(_ client: any TestClientProtocol, _ app: OpenIDTestClient, _ token: String, scope: String? = nil) async throws
        -> JSONTestResponse
    {
        try await client.form("/oauth2/token", "grant_type=refresh_token&refresh_token=\(token)" + (scope.map { "&scope=\($0)" } ?? "")
            + app.publicClientParameter, headers: app.headers)
    }

    @Test func refreshTokensRotateAndAReuseEndsTheSessionWithABackChannelLogout() async throws {
        let receiver = Receiver()
        try await TestServer.runWithAdminKey(postForm: receiver.post) { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true, backchannel: "https://app.example.com/backchannel")
            let (email, userId) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            let first = try await Self.tokens(client, app, &browser, email: email)
            let r1 = try #require(first.value("refresh_token"))
            let sid = try #require(jwtPayload(first.value("id_token") ?? "")["sid"] as? String)

            let second = try await Self.refresh(client, app, r1)
            #expect(second.status == .ok)
            let r2 = try #require(second.value("refresh_token"))
            #expect(r2 != r1)
            #expect(jwtPayload(second.value("id_token") ?? "")["nonce"] == nil)
            // A narrower scope is allowed, a wider one is not.
            let narrowed = try await Self.refresh(client, app, r2, scope: "openid")
            #expect(narrowed.value("scope") == "openid")
            let r3 = try #require(narrowed.value("refresh_token"))
            let wider = try await Self.refresh(client, app, r3, scope: "openid%20admin")
            #expect(wider.value("error") == "invalid_scope")

            // r1 again: a reuse. The family dies (even r3's successor), and the Touchstone session ends.
            let reuse = try await Self.refresh(client, app, r1)
            #expect(reuse.status == .badRequest)
            #expect(reuse.value("error") == "invalid_grant")
            let session = try #require(browser.cookies["touchstone_session"])
            #expect(try await client.request(.get, "/v1/session", token: session).status == .unauthorized)

            #expect(await receiver.next())
            let (url, body) = try #require(receiver.posts.withLockedValue { $0.first })
            #expect(url == "https://app.example.com/backchannel")
            #expect(body.hasPrefix("logout_token="))
            let token = String(body.dropFirst("logout_token=".count)).removingPercentEncoding ?? ""
            let claims = jwtPayload(token)
            #expect(claims["sid"] as? String == sid && claims["sub"] as? String == userId && claims["aud"] as? String == app.id)
            #expect(claims["nonce"] == nil && claims["jti"] is String && claims["iat"] is Int && claims["exp"] is Int)
            #expect((claims["events"] as? [String: Any])?["http://schemas.openid.net/event/backchannel-logout"] != nil)
            let header = try #require(Data(base64Encoded: String(token.split(separator: ".")[0]) + "=="))
            #expect(String(decoding: header, as: UTF8.self).contains("logout+jwt"))
        }
    }

    @Test func aFailedBackChannelDeliveryIsRetried() async throws {
        let receiver = Receiver()
        receiver.status.withLockedValue { $0 = 503 }
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(clock: clock, postForm: receiver.post) { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true, backchannel: "https://app.example.com/backchannel")
            let (email, _) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            _ = try await Self.tokens(client, app, &browser, email: email)
            // Sign-out anywhere (here the v1 API) ends the session; the client hears of it.
            let session = try #require(browser.cookies["touchstone_session"])
            #expect(try await client.request(.delete, "/v1/session", token: session).status == .noContent)
            #expect(await receiver.next())
            receiver.status.withLockedValue { $0 = 200 }
            clock.advance(by: 1)  // the first retry is due a second later
            #expect(await receiver.next())
            #expect(receiver.posts.withLockedValue { $0.count } == 2)
        }
    }

    @Test func revocationIntrospectionAndGrants() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key)
            let (email, _) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            let tokens = try await Self.tokens(client, app, &browser, email: email)
            let access = try #require(tokens.value("access_token"))
            let refresh = try #require(tokens.value("refresh_token"))

            // Introspection (a confidential client): active, with the scope.
            let active = try await client.form("/oauth2/introspect", "token=\(access)", headers: app.headers)
            #expect(active.any(["active"]) as? Bool == true)
            #expect(active.value("scope") == "openid email profile offline_access")
            #expect(active.value("client_id") == app.id)
            let garbage = try await client.form("/oauth2/introspect", "token=garbage", headers: app.headers)
            #expect(garbage.any(["active"]) as? Bool == false)

            // Revoking the access token: UserInfo and introspection refuse it; the refresh token still works.
            let revoked = try await client.form("/oauth2/revoke", "token=\(access)&token_type_hint=access_token", headers: app.headers)
            #expect(revoked.status == .ok)
            #expect(try await client.request(.get, "/oauth2/userinfo", token: access).status == .unauthorized)
            #expect(try await client.form("/oauth2/introspect", "token=\(access)", headers: app.headers).any(["active"]) as? Bool == false)
            let next = try await Self.refresh(client, app, refresh)
            #expect(next.status == .ok)
            // Unknown tokens: 200 all the same.
            #expect(try await client.form("/oauth2/revoke", "token=nothing", headers: app.headers).status == .ok)
            #expect(try await client.form("/oauth2/revoke", "token=x&token_type_hint=id_token", headers: app.headers).value("error")
                == "unsupported_token_type")

            // The user's grants: listed, and withdrawing one kills that client's refresh tokens.
            let session = try #require(browser.cookies["touchstone_session"])
            let grants = try await client.request(.get, "/v1/grants", token: session)
            let list = try #require(grants.any(["grants"]) as? [[String: Any]])
            #expect(list.first?["clientId"] as? String == app.id && list.first?["clientName"] as? String == "Test app")
            #expect(try await client.request(.delete, "/v1/grants/\(app.id)", token: session).status == .noContent)
            let dead = try await Self.refresh(client, app, try #require(next.value("refresh_token")))
            #expect(dead.value("error") == "invalid_grant")
            let gone = try await client.request(.delete, "/v1/grants/\(app.id)", token: session)
            #expect(gone.status == .notFound && gone.errorCode == "grant_not_found")
            #expect(try await client.request(.get, "/v1/grants").status == .unauthorized)
        }
    }

    @Test func clientAuthenticationErrorsUseOAuthsShape() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key)
            let publicApp = try await client.registerClient(key: key, name: "SPA", isPublic: true)
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            var wrong = app
            wrong.secret = "tsc_wrong"
            let basic = try await client.form("/oauth2/token", "grant_type=authorization_code&code=x&redirect_uri=x&code_verifier=x",
                headers: wrong.headers)
            #expect(basic.status == .unauthorized && basic.value("error") == "invalid_client")
            #expect(basic.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            #expect(basic.headers[.cacheControl] == "no-store")
            let missing = try await client.form("/oauth2/token", "grant_type=refresh_token&refresh_token=x&client_id=\(app.id)", headers: form)
            #expect(missing.status == .unauthorized && missing.value("error") == "invalid_client")
            #expect(missing.headers[.wwwAuthenticate] == nil)
            let post = try await client.form("/oauth2/token",
                "grant_type=refresh_token&refresh_token=x&client_id=\(app.id)&client_secret=\(app.secret!)", headers: form)
            #expect(post.value("error") == "invalid_grant")  // client_secret_post works; the token does not
            let unknown = try await client.form("/oauth2/token", "grant_type=refresh_token&refresh_token=x&client_id=nobody", headers: form)
            #expect(unknown.value("error") == "invalid_client")
            let both = try await client.form("/oauth2/token", "grant_type=refresh_token&refresh_token=x&client_secret=\(app.secret!)",
                headers: app.headers)
            #expect(both.value("error") == "invalid_request")
            let publicWithSecret = try await client.form("/oauth2/token",
                "grant_type=refresh_token&refresh_token=x&client_id=\(publicApp.id)&client_secret=abc", headers: form)
            #expect(publicWithSecret.value("error") == "invalid_client")
            let publicIntrospects = try await client.form("/oauth2/introspect", "token=x&client_id=\(publicApp.id)", headers: form)
            #expect(publicIntrospects.value("error") == "invalid_client")
            // The request's own shape.
            let json = try await client.request(.post, "/oauth2/token", json: ["grant_type": "refresh_token"])
            #expect(json.status == .badRequest && json.value("error") == "invalid_request")
            #expect(try await client.form("/oauth2/token", "client_id=\(publicApp.id)", headers: form).value("error") == "invalid_request")
            #expect(try await client.form("/oauth2/token", "grant_type=password&client_id=\(publicApp.id)", headers: form).value("error")
                == "unsupported_grant_type")
            #expect(try await client.form("/oauth2/token", "grant_type=refresh_token&grant_type=refresh_token&client_id=\(publicApp.id)",
                headers: form).value("error") == "invalid_request")
            #expect(try await client.form("/oauth2/token", "grant_type=authorization_code&client_id=\(publicApp.id)", headers: form)
                .value("error_description")?.contains("code") == true)
            #expect(try await client.form("/oauth2/token", "grant_type=refresh_token&refresh_token=%00&client_id=\(publicApp.id)",
                headers: form).value("error") == "invalid_request")
            // UserInfo without a token, or with an access token of the v1 API (no OpenID grant, no openid scope).
            let none = try await client.request(.get, "/oauth2/userinfo")
            #expect(none.status == .unauthorized && none.headers[.wwwAuthenticate] == #"Bearer, DPoP algs="ES256 EdDSA PS256 RS256""#)
            let (_, _) = try await Flow.signUp(client)
            let user = try await client.request(.post, "/v1/users", json: ["email": "direct@example.com", "password": Flow.password])
            let firstParty = try await client.request(.post, "/v1/session/token", token: try #require(user.value("session", "token")))
            let insufficient = try await client.request(.get, "/oauth2/userinfo", token: try #require(firstParty.value("accessToken")))
            #expect(insufficient.status == .forbidden && insufficient.value("error") == "insufficient_scope")
            #expect(insufficient.headers[.wwwAuthenticate]?.contains("error=\"insufficient_scope\"") == true)
        }
    }

    @Test func maxAgeAndPromptLoginSignInAgainKeepingTheSid() async throws {
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(clock: clock) { client, key, _ in
            let app = try await client.registerClient(key: key)
            let (email, _) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            let first = try await Self.tokens(client, app, &browser, email: email, scope: "openid")
            let firstClaims = jwtPayload(first.value("id_token") ?? "")
            clock.advance(by: 120)
            // max_age=60: the page again; after it, the same sid and a newer auth_time.
            let (uri, verifier, _) = app.authorize(scope: "openid", extra: [("max_age", "60")])
            let page = try await browser.get(uri)
            #expect(page.status == .ok && page.html.contains("<label for=\"password\">"))
            let done = try await browser.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", email), ("password", Flow.password)])
            let code = try #require(OpenIDBrowser.query(done.location ?? "")["code"], "\(done.status) \(done.html)")
            let second = jwtPayload(try await Flow.exchange(client, app, code: code, verifier: verifier).value("id_token") ?? "")
            #expect(second["sid"] as? String == firstClaims["sid"] as? String)
            #expect((second["auth_time"] as? Int ?? 0) >= (firstClaims["auth_time"] as? Int ?? 0) + 120)
            // prompt=login with consent asked again: signing in leads to the consent page, and Allow ends the flow
            // (the consent form proves the sign-in happened in this flow).
            let login = try await browser.get(app.authorize(scope: "openid email", extra: [("prompt", "login")]).uri)
            #expect(login.status == .ok && login.html.contains("<label for=\"password\">"))
            let consent = try await browser.post("/oauth2/authorize", form: login.form(action: "sign_in") + [("email", email), ("password", Flow.password)])
            #expect(consent.html.contains(">Allow</button>"))
            let allowed = try await browser.post("/oauth2/authorize", form: consent.form(action: "consent") + [("decision", "allow")])
            #expect(OpenIDBrowser.query(allowed.location ?? "")["code"] != nil, "\(allowed.status) \(allowed.html)")
        }
    }

    @Test func logoutEndsTheBrowserSessionAndReturnsOnlyToRegisteredURIs() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            let (email, _) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            let tokens = try await Self.tokens(client, app, &browser, email: email)
            let idToken = try #require(tokens.value("id_token"))
            let session = try #require(browser.cookies["touchstone_session"])
            let back = try await browser.get(
                "/oauth2/logout?id_token_hint=\(idToken)&post_logout_redirect_uri=\(OpenIDBrowser.encode("https://app.example.com/bye"))&state=s1")
            #expect(back.status == .found)
            #expect(back.location == "https://app.example.com/bye?state=s1")
            #expect(browser.cookies["touchstone_session"] == nil)
            #expect(try await client.request(.get, "/v1/session", token: session).status == .unauthorized)
            #expect(try await Self.refresh(client, app, try #require(tokens.value("refresh_token"))).value("error") == "invalid_grant")

            // Unregistered, or without a hint naming the client: a signed-out page, never the URI.
            let evil = try await browser.get(
                "/oauth2/logout?id_token_hint=\(idToken)&post_logout_redirect_uri=\(OpenIDBrowser.encode("https://evil.example.com/"))")
            #expect(evil.status == .ok && evil.location == nil && evil.html.contains("You are signed out."))
            let noHint = try await browser.get("/oauth2/logout?post_logout_redirect_uri=\(OpenIDBrowser.encode("https://app.example.com/bye"))")
            #expect(noHint.status == .ok && noHint.location == nil)
            let forged = try await browser.get("/oauth2/logout?id_token_hint=e30.e30.sig")
            #expect(forged.status == .badRequest)
            let longState = try await browser.get("/oauth2/logout?state=" + String(repeating: "s", count: 2049))
            #expect(longState.status == .badRequest && longState.html.contains("state"))
        }
    }

    @Test func discoveryServesOneDocumentAtBothAddresses() async throws {
        try await TestServer.run { client in
            let oidc = try await client.request(.get, "/.well-known/openid-configuration")
            let oauth = try await client.request(.get, "/.well-known/oauth-authorization-server")
            #expect(oidc.status == .ok && oidc.body == oauth.body)
            #expect(oidc.value("issuer") == "http://localhost:0")
            #expect(oidc.value("authorization_endpoint") == "http://localhost:0/oauth2/authorize")
            #expect(oidc.value("token_endpoint") == "http://localhost:0/oauth2/token")
            #expect(oidc.value("userinfo_endpoint") == "http://localhost:0/oauth2/userinfo")
            #expect(oidc.value("jwks_uri") == "http://localhost:0/.well-known/jwks.json")
            #expect(oidc.value("end_session_endpoint") == "http://localhost:0/oauth2/logout")
            #expect(oidc.any(["code_challenge_methods_supported"]) as? [String] == ["S256"])
            #expect(oidc.any(["response_types_supported"]) as? [String] == ["code"])
            #expect(oidc.any(["authorization_response_iss_parameter_supported"]) as? Bool == true)
            #expect(oidc.any(["backchannel_logout_session_supported"]) as? Bool == true)
            let scopes = Set(oidc.any(["scopes_supported"]) as? [String] ?? [])
            #expect(scopes.isSuperset(of: ["openid", "email", "profile", "offline_access"]))
            let methods = Set(oidc.any(["token_endpoint_auth_methods_supported"]) as? [String] ?? [])
            #expect(methods.isSuperset(of: ["client_secret_basic", "client_secret_post", "none"]))
            #expect(oidc.any(["acr_values_supported"]) as? [String] == ["phr", "phrh"])
        }
    }
}
