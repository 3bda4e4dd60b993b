import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneOpenID
import TouchstoneServer
import TouchstoneTesting

/// Every error of `/oauth2/authorize` (issue #31, §3): shown without a redirect when the client or its redirect URI
/// is in doubt, sent back to the redirect URI (with `state` and `iss`) otherwise.
struct AuthorizationErrorTests {
    typealias Flow = AuthorizationCodeFlowTests

    @Test(arguments: [
        ("client_id=unknown&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb", "not registered"),
        ("client_id=CLIENT&redirect_uri=https%3A%2F%2Fevil.example.com%2Fcb", "redirect_uri is not one registered"),
        ("client_id=CLIENT&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb%2F", "redirect_uri is not one registered"),
        ("client_id=CLIENT", "redirect_uri&#39; is missing"),
        ("redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb", "client_id&#39; is missing"),
        ("client_id=CLIENT&client_id=CLIENT&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb", "repeated"),
        ("client_id=CLIENT&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb", "repeated"),
        ("client_id=CLIENT%00&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb", "control characters"),
        ("client_id=CLIENT&redirect_uri=%ZZ", "percent-encoding"),
    ])
    func aDoubtfulClientOrRedirectIsAPageNeverARedirect(query: String, says: String) async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key)
            let response = try await client.request(.get, "/oauth2/authorize?" + query.replacingOccurrences(of: "CLIENT", with: app.id))
            #expect(response.status == .badRequest)
            #expect(response.headers[.location] == nil)
            // A control character in a query is refused before any route (the JSON error of every route).
            #expect(String(decoding: response.body, as: UTF8.self).contains(says))
        }
    }

    @Test(arguments: [
        ("code_challenge_method", nil, "invalid_request", "PKCE is required"),  // no PKCE at all
        ("code_challenge_method", "plain", "invalid_request", "S256"),
        ("code_challenge_method", "", "invalid_request", "code_challenge_method is required"),
        ("response_type", "token", "unsupported_response_type", "response_type=code"),
        ("response_type", "", "invalid_request", "response_type"),
        ("scope", "openid admin", "invalid_scope", "unknown scope 'admin'"),
        ("scope", "", "invalid_request", "scope"),
        ("prompt", "none login", "invalid_request", "prompt=none"),
        ("prompt", "sometimes", "invalid_request", "prompt"),
        ("max_age", "-1", "invalid_request", "max_age"),
        ("response_mode", "fragment", "invalid_request", "response_mode=query"),
        ("request", "eyJ.x.y", "request_not_supported", "request objects"),
        ("request_uri", "urn:x", "request_uri_not_supported", "request_uri"),
        ("nonce", String(repeating: "n", count: 513), "invalid_request", "nonce"),
    ] as [(String, String?, String, String)])
    func aBadRequestGoesBackToTheClient(parameter: String, value: String?, error: String, says: String) async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key)
            var (uri, _, state) = app.authorize()
            var components = URLComponents(string: uri)!
            var items = components.queryItems!.filter { $0.name != parameter }
            if parameter == "code_challenge_method" && value == nil { items.removeAll { $0.name == "code_challenge" } }
            if let value { items.append(URLQueryItem(name: parameter, value: value)) }
            components.percentEncodedQuery = items.map { "\($0.name)=\(OpenIDBrowser.encode($0.value ?? ""))" }.joined(separator: "&")
            uri = components.string!
            let response = try await client.request(.get, uri)
            #expect(response.status == .found)
            let query = OpenIDBrowser.query(try #require(response.headers[.location]))
            #expect(query["error"] == error)
            #expect(query["error_description"]?.contains(says) == true, "\(query["error_description"] ?? "")")
            #expect(query["state"] == state)
            #expect(query["iss"] == "http://localhost:0")
        }
    }

    @Test func aRepeatedParameterIsInvalidRequest() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key)
            let (uri, _, _) = app.authorize()
            let response = try await client.request(.get, uri + "&scope=openid")
            #expect(OpenIDBrowser.query(response.headers[.location] ?? "")["error"] == "invalid_request")
        }
    }

    @Test func promptNoneNeedsASignedInBrowserAndConsent() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key)
            let (email, _) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            let loggedOut = try await browser.get(app.authorize(extra: [("prompt", "none")]).uri)
            #expect(OpenIDBrowser.query(loggedOut.location ?? "")["error"] == "login_required")
            // Signed in, but the third-party client has no consent yet.
            let page = try await browser.get(app.authorize().uri)
            let consent = try await browser.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", email), ("password", Flow.password)])
            #expect(consent.html.contains(">Allow</button>"))
            let noConsent = try await browser.get(app.authorize(extra: [("prompt", "none")]).uri)
            #expect(OpenIDBrowser.query(noConsent.location ?? "")["error"] == "consent_required")
            // Deny: access_denied, and nothing remembered.
            let denied = try await browser.post("/oauth2/authorize", form: consent.form(action: "consent") + [("decision", "deny")])
            #expect(OpenIDBrowser.query(denied.location ?? "")["error"] == "access_denied")
            // Allowed once, prompt=none then answers silently; prompt=consent asks again.
            let again = try await browser.get(app.authorize().uri)
            let allowed = try await browser.post("/oauth2/authorize", form: again.form(action: "consent") + [("decision", "allow")])
            #expect(OpenIDBrowser.query(allowed.location ?? "")["code"] != nil)
            let silent = try await browser.get(app.authorize(extra: [("prompt", "none")]).uri)
            #expect(OpenIDBrowser.query(silent.location ?? "")["code"] != nil)
            let asked = try await browser.get(app.authorize(extra: [("prompt", "consent")]).uri)
            #expect(asked.status == .ok && asked.html.contains(">Allow</button>"))
            // A wider scope than allowed asks again too.
            let narrow = try await browser.get(app.authorize(scope: "openid").uri)
            #expect(narrow.status == .found)
        }
    }

    @Test func signInFormErrorsStayOnThePage() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            let (email, _) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            let page = try await browser.get(app.authorize().uri)
            let wrong = try await browser.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", email), ("password", "wrong password!")])
            #expect(wrong.status == .unauthorized)
            #expect(wrong.html.contains("Wrong email or password.") && wrong.html.contains("role=\"alert\""))
            #expect(browser.cookies["touchstone_session"] == nil)
            let malformed = try await browser.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", "not-an-email"), ("password", "x")])
            #expect(malformed.status == .badRequest)
            let badPasskey = try await browser.post("/oauth2/authorize", form: page.form(action: "passkey") + [("credential", "{\"id\": 1}")])
            #expect(badPasskey.status == .badRequest)
            // Without the CSRF cookie (a form posted from elsewhere): refused, nothing signed in.
            var stranger = OpenIDBrowser(client)
            let forged = try await stranger.post("/oauth2/authorize", form: page.form(action: "sign_in") + [("email", email), ("password", Flow.password)])
            #expect(forged.status == .forbidden)
            #expect(stranger.cookies["touchstone_session"] == nil)
            // A CSRF token that is not the browser's own.
            var tampered = page.form(action: "sign_in").filter { $0.0 != "csrf_token" }
            tampered.append(("csrf_token", String(repeating: "A", count: 43)))
            #expect(try await browser.post("/oauth2/authorize", form: tampered + [("email", email), ("password", Flow.password)]).status == .forbidden)
        }
    }

    @Test func aPasskeyACRTheAccountCannotMeetIsAccessDenied() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            let (email, _) = try await Flow.signUp(client)
            var browser = OpenIDBrowser(client)
            // Not signed in: the page asks for a passkey only.
            let page = try await browser.get(app.authorize(extra: [("acr_values", "phrh")]).uri)
            #expect(page.status == .ok)
            #expect(!page.html.contains("<label for=\"password\">") && page.html.contains("a passkey kept on this device"))
            // Signed in with a password, the account has no passkey: access_denied.
            _ = try await Flow.signInAndAllow(&browser, app.authorize().uri, email: email)
            let denied = try await browser.get(app.authorize(extra: [("acr_values", "phr")]).uri)
            let query = OpenIDBrowser.query(denied.location ?? "")
            #expect(query["error"] == "access_denied")
            #expect(query["error_description"]?.contains("no passkey") == true)
        }
    }
}
