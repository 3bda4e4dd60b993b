import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting

/// "Sign in with your phone" on the OpenID provider's sign-in page (issue #34): the page's request names the client,
/// the phone shows its name, and the approved session becomes the browser's.
struct OpenIDPhoneSignInTests {
    @Test func theApprovedSessionSignsTheBrowserInAndTheClientGetsACode() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key, name: "Web bank", firstParty: true)
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            var browser = OpenIDBrowser(client)
            let (uri, verifier, _) = app.authorize(scope: "openid email")
            let page = try await browser.get(uri)
            #expect(page.status == .ok && page.html.contains("Sign in with your phone") && page.html.contains("data-client-id=\"\(app.id)\""))
            #expect(page.html.contains("aria-label=\"The number to pick on your phone\""))

            // What the page's script does: a request for the client, the phone's approval, the poll.
            let created = try await flow.requestSignIn(["email": account.email, "clientId": app.id])
            let request = try #require(try await flow.pendingRequests(phone).first)
            #expect(request["client"] as? String == "Web bank")
            let approved = try await flow.approve(
                try #require(created.value("requestId")), phone, payload: try Flow.payload(request), choice: try #require(created.any(["number"]) as? Int))
            #expect(approved.status == .ok)
            let polled = try await flow.pollSignIn(try #require(created.value("requestId")), try #require(created.value("pollToken")))
            let session = try #require(polled.value("session", "token"))

            // A password session is not accepted in its place.
            let form = page.form(action: "phone").filter { $0.0 != "session" }
            let refused = try await browser.post("/oauth2/authorize", form: form + [("session", account.token)])
            #expect(refused.status == .unauthorized && refused.html.contains("not a fresh sign-in approved on your phone"))
            let missing = try await browser.post("/oauth2/authorize", form: form)
            #expect(missing.status == .badRequest && missing.html.contains("The phone&#39;s answer is missing"), "\(missing.html)")
            let unknown = try await browser.post("/oauth2/authorize", form: form + [("session", "not-a-session")])
            #expect(unknown.status == .unauthorized)
            let done = try await browser.post("/oauth2/authorize", form: form + [("session", session)])
            let code = try #require(OpenIDBrowser.query(done.location ?? "")["code"], "\(done.status) \(done.html)")
            let tokens = try await AuthorizationCodeFlowTests.exchange(client, app, code: code, verifier: verifier)
            #expect(tokens.status == .ok)
            let idToken = jwtPayload(try #require(tokens.value("id_token")))
            #expect(idToken["sub"] as? String == account.userId && idToken["amr"] as? [String] == ["hwk", "user"])
        }
    }

    @Test func aPasskeyOnlyRequestOffersNoPhone() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            var browser = OpenIDBrowser(client)
            let page = try await browser.get(app.authorize(extra: [("acr_values", "phr")]).uri)
            #expect(page.status == .ok && !page.html.contains("Sign in with your phone"))
        }
    }
}
