import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// Issue #44 item 3: whatever ends a session that OpenID clients hold tokens for sends them a back-channel logout token
/// from the outbox. The causes not covered elsewhere (docs/oidc.md lists each cause with its test): a password change,
/// a password reset, an admin's sign-out, the account's deletion by its owner, "sign out everywhere else", an
/// RP-initiated logout, and the revocation of a registration whose proof key a session is bound to.
struct SessionEndLogoutTests {
    enum Cause: String, CaseIterable, Sendable {
        case passwordChange, passwordReset, adminSignOut, selfDeletion, signOutEverywhereElse, rpInitiatedLogout
    }

    @Test(arguments: Cause.allCases)
    func theEndIsAnnouncedToTheClient(cause: Cause) async throws {
        let receiver = TokenLifecycleTests.Receiver()
        let mailbox = TestMailbox()
        try await Self.run(receiver: receiver, mailbox: mailbox) { client, key in
            let app = try await client.registerClient(key: key, firstParty: true, backchannel: "https://app.example.com/backchannel")
            let (email, userId) = try await AuthorizationCodeFlowTests.signUp(client)
            var browser = OpenIDBrowser(client)
            let tokens = try await TokenLifecycleTests.tokens(client, app, &browser, email: email)
            let idToken = try #require(tokens.value("id_token"))
            let sid = try #require(jwtPayload(idToken)["sid"] as? String)
            // The user's own session elsewhere (a phone), from which they act.
            let signIn = try await client.request(.post, "/v1/sessions", json: ["email": email, "password": AuthorizationCodeFlowTests.password])
            let phone = try #require(signIn.value("session", "token"))

            let answer: HTTPResponse.Status
            switch cause {
            case .passwordChange:
                answer = try await client.request(.put, "/v1/session/password", token: phone, json: ["newPassword": "another long passphrase"]).status
            case .passwordReset:
                _ = try await client.request(.post, "/v1/password-resets", json: ["email": email])
                let code = try #require(try await mailbox.waitForMail(to: email, kind: "password_reset").code)
                answer = try await client.request(
                    .post, "/v1/password-resets/confirm", json: ["email": email, "code": code, "newPassword": "a reset passphrase 7"]).status
            case .adminSignOut:
                answer = try await client.request(.post, "/v1/admin/users/\(userId)/sign-out", token: key).status
            case .selfDeletion:
                answer = try await client.request(.delete, "/v1/users/me", token: phone, json: ["confirmEmail": email]).status
            case .signOutEverywhereElse:
                answer = try await client.request(.post, "/v1/session/sessions/revoke-others", token: phone).status
            case .rpInitiatedLogout:
                answer = try await browser.get("/oauth2/logout?id_token_hint=\(idToken)").status
            }
            #expect(answer.code < 400, "\(cause): \(answer)")
            #expect(await receiver.next(), "\(cause): no back-channel logout")
            let (url, body) = try #require(receiver.posts.withLockedValue { $0.first })
            #expect(url == "https://app.example.com/backchannel")
            let claims = jwtPayload(String(body.dropFirst("logout_token=".count)).removingPercentEncoding ?? "")
            #expect(claims["sid"] as? String == sid && claims["sub"] as? String == userId && claims["aud"] as? String == app.id, "\(cause)")
        }
    }

    /// A session bound to a registration's proof key ends with the registration: revoked (not only refused when next
    /// read), so a client holding tokens from it is told.
    @Test func revokingARegistrationAnnouncesItsBoundSessions() async throws {
        let receiver = TokenLifecycleTests.Receiver()
        try await Self.run(receiver: receiver, configuration: BoundSessionTests.configuration()) { client, key, store in
            let app = try await client.registerClient(key: key, firstParty: true, backchannel: "https://app.example.com/backchannel")
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256), proofKey = DPoPProofMaker.p256()
            let enrolled = try await BoundSessionTests.enrol(flow, account.token, device, proofKey)
            let registrationId = try #require(enrolled.value("registration", "id"))
            let session = try #require(try await flow.login(registrationId, device).value("session", "token"))
            let listed = try await BoundSessionTests.call(client, .get, "/v1/session/sessions", session: session, proof: proofKey)
            let sid = try #require((listed.any(["sessions"]) as? [[String: Any]])?.first { $0["current"] as? Bool == true }?["id"] as? String)
            // A client holding tokens from that session (as a token family names it).
            try await store.insertTokenFamily(TokenFamilyRecord(
                id: "family-1", clientId: app.id, userId: account.userId, sessionId: sid, scope: "openid",
                authTime: Date(), amr: ["hwk", "user"], acr: nil, createdAt: Date()))

            let revoked = try await client.request(.delete, "/v1/biometrics/registrations/\(registrationId)", token: account.token)
            #expect(revoked.status == .noContent)
            #expect(await receiver.next(), "no back-channel logout")
            let body = try #require(receiver.posts.withLockedValue { $0.first?.1 })
            #expect(jwtPayload(String(body.dropFirst("logout_token=".count)).removingPercentEncoding ?? "")["sid"] as? String == sid)
        }
    }

    /// A server with an admin key, a mailbox and the receiver of back-channel posts.
    static func run(
        receiver: TokenLifecycleTests.Receiver,
        mailbox: TestMailbox = TestMailbox(),
        configuration: TouchstoneConfiguration = TestServer.configuration(),
        _ body: @Sendable (any TestClientProtocol, String, any TouchstoneStore) async throws -> Void
    ) async throws {
        guard case .sqliteFile(let path) = configuration.database else { preconditionFailure("needs a SQLite file") }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await store.migrate()
        let (key, _) = try await AdminKeys.create(name: "ops", store: store)
        try await TestServer.run(configuration: configuration, store: store, postForm: receiver.post, mailbox: mailbox) { client in
            try await body(client, key, store)
        }
    }

    static func run(
        receiver: TokenLifecycleTests.Receiver,
        mailbox: TestMailbox = TestMailbox(),
        _ body: @Sendable (any TestClientProtocol, String) async throws -> Void
    ) async throws {
        try await Self.run(receiver: receiver, mailbox: mailbox) { client, key, _ in try await body(client, key) }
    }
}
