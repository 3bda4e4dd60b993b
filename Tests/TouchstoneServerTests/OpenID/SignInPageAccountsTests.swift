import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing
import TouchstoneOpenID
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// The provider's sign-in page for users without a password (issue #42): account creation (and `prompt=create`), a
/// mailed code, a recovery code and a password reset, each in the same tab, returning to the authorization.
struct SignInPageAccountsTests {
    static func run(
        _ customize: @escaping (inout TouchstoneConfiguration) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, OpenIDTestClient, TestMailbox) async throws -> Void
    ) async throws {
        let configuration = TestServer.configuration(customize)
        guard case .sqliteFile(let path) = configuration.database else { preconditionFailure("a SQLite file database") }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await store.migrate()
        let (key, _) = try await AdminKeys.create(name: "ops", store: store)
        let mailbox = TestMailbox()
        try await TestServer.run(configuration: configuration, store: store, mailbox: mailbox) { client in
            let app = try await client.registerClient(key: key, isPublic: true, firstParty: true)
            try await body(client, app, mailbox)
        }
    }

    /// The code the redirect carries, after checking it is the client's.
    static func code(_ page: OpenIDBrowser.Page) throws -> String {
        let said = page.html.range(of: "id=\"status\"").map { String(page.html[$0.upperBound...].prefix(200)) } ?? ""
        try #require(page.status == .found, "\(page.status) \(said)")
        let location = try #require(page.location)
        #expect(location.hasPrefix("https://app.example.com/cb?"))
        return try #require(OpenIDBrowser.query(location)["code"])
    }

    @Test func promptCreateOpensAccountCreationAndTheNewAccountContinuesTheFlow() async throws {
        try await Self.run { client, app, _ in
            let discovery = try await client.request(.get, "/.well-known/openid-configuration")
            #expect((discovery.json["prompt_values_supported"] as? [String])?.contains("create") == true)
            var browser = OpenIDBrowser(client)
            let (uri, verifier, _) = app.authorize(extra: [("prompt", "create")])
            let page = try await browser.get(uri)
            #expect(page.status == .ok)
            #expect(page.html.contains("<details id=\"create-account\" open>"))
            #expect(page.html.contains("<label for=\"sign-up-email\">Email</label>") && page.html.contains(">Create account with a passkey</button>"))
            let email = "created-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let done = try await browser.post(
                "/oauth2/authorize", form: page.form(action: "sign_up") + [("email", email), ("password", "a brand new passphrase"), ("display_name", "Neo")])
            let code = try Self.code(done)
            let tokens = try await AuthorizationCodeFlowTests.exchange(client, app, code: code, verifier: verifier)
            let claims = jwtPayload(try #require(tokens.value("id_token")))
            #expect(claims["email"] as? String == email && claims["name"] as? String == "Neo")
            #expect(claims["amr"] as? [String] == ["pwd"])
            // A taken address is said on the page, with the creation part still open; `prompt=create` with `none` is refused.
            var other = OpenIDBrowser(client)
            let again = try await other.get(app.authorize(extra: [("prompt", "create")]).uri)
            let taken = try await other.post("/oauth2/authorize", form: again.form(action: "sign_up") + [("email", email), ("password", "another passphrase")])
            #expect(taken.status == .conflict && taken.html.contains("<details id=\"create-account\" open>"))
            // The page takes only a session just made by a passkey sign-up, not any session its script might post.
            let someSession = try #require(try await client.request(
                .post, "/v1/sessions", json: ["email": email, "password": "a brand new passphrase"]).value("session", "token"))
            let posted = try await other.post("/oauth2/authorize", form: again.form(action: "passkey_sign_up").filter { $0.0 != "session" } + [("session", someSession)])
            #expect(posted.status == .unauthorized && posted.html.contains("That is not an account just created with a passkey"))
            let none = try await other.get(app.authorize(extra: [("prompt", "create none")]).uri)
            let location = try #require(none.location)
            #expect(none.status == .found && OpenIDBrowser.query(location)["error"] == "invalid_request")
        }
    }

    @Test func aMailedCodeARecoveryCodeAndAResetSignInInThisTab() async throws {
        try await Self.run { client, app, mailbox in
            let (email, _) = try await AuthorizationCodeFlowTests.signUp(client)
            // A mailed code: asked for, shown, typed; the flow continues to the client.
            var browser = OpenIDBrowser(client)
            let page = try await browser.get(app.authorize().uri)
            let asked = try await browser.post("/oauth2/authorize", form: page.form(action: "email_code_request") + [("email", email)])
            #expect(asked.status == .ok && asked.html.contains("<details id=\"other-ways\" open>"))
            #expect(asked.html.contains("If an account uses \(email), a sign-in code is on its way."))
            let code = try #require(try await mailbox.waitForMail(to: email, kind: "sign_in_code").code)
            let wrong = try await browser.post("/oauth2/authorize", form: asked.form(action: "email_code") + [("code", "000000")])
            #expect(wrong.status == .badRequest && wrong.html.contains("id=\"email-code-form\""))
            _ = try Self.code(try await browser.post("/oauth2/authorize", form: asked.form(action: "email_code") + [("code", code)]))

            // A password reset: the code and a new password, then signed in (the account has no passkey or device).
            var resetting = OpenIDBrowser(client)
            let start = try await resetting.get(app.authorize().uri)
            let sent = try await resetting.post("/oauth2/authorize", form: start.form(action: "reset_request") + [("email", email)])
            #expect(sent.html.contains("If an account uses \(email), a reset code is on its way."))
            let resetCode = try #require(try await mailbox.waitForMail(to: email, kind: "password_reset").code)
            _ = try Self.code(try await resetting.post(
                "/oauth2/authorize", form: sent.form(action: "reset") + [("code", resetCode), ("new_password", "the new passphrase")]))
            #expect(try await client.request(.post, "/v1/sessions", json: ["email": email, "password": "the new passphrase"]).status == .ok)

            // A recovery code, made through the API with a fresh password session.
            let token = try #require(
                try await client.request(.post, "/v1/sessions", json: ["email": email, "password": "the new passphrase"]).value("session", "token"))
            let codes = try #require(try await client.request(.post, "/v1/recovery-codes", token: token).any(["codes"]) as? [String])
            var recovering = OpenIDBrowser(client)
            let form = try await recovering.get(app.authorize().uri)
            _ = try Self.code(try await recovering.post("/oauth2/authorize", form: form.form(action: "recovery_code") + [("email", email), ("code", codes[0])]))
        }
    }

    @Test func withSignUpOffThePageOffersNoAccountAndRefusesOne() async throws {
        try await Self.run({ $0.accounts.signUp = false }) { client, app, _ in
            var browser = OpenIDBrowser(client)
            let page = try await browser.get(app.authorize(extra: [("prompt", "create")]).uri)
            #expect(page.status == .ok && !page.html.contains("create-account"))
            let form = page.form(action: "sign_in").filter { $0.0 != "action" } + [("action", "sign_up"), ("email", "x@example.com"), ("password", "a passphrase")]
            let refused = try await browser.post("/oauth2/authorize", form: form)
            #expect(refused.status == .forbidden && refused.html.contains("This server does not let people create accounts"))
        }
    }
}
