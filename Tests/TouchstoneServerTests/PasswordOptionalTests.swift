import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// The password becomes optional (issue #42): `DELETE /v1/session/password`, `last_credential`, a password set on an
/// account without one, and a passwordless account that looks like an unknown password to everyone else.
struct PasswordOptionalTests {
    typealias Database = NulInputTests.Database

    /// An account with a device key and a passkey, a fresh password session, and the mailbox.
    struct Account: Sendable {
        var client: any TestClientProtocol
        var flow: Flow
        var account: Flow.Account
        var registrationId: String
        var device: TestDeviceKey
        var passkeyId: String
        var mailbox: TestMailbox
    }

    static func withAccount(_ database: Database = .sqlite, _ body: @Sendable (Account) async throws -> Void) async throws {
        try await NulInputTests.withStore(database) { store in
            let mailbox = TestMailbox()
            try await TestServer.run(configuration: PasskeyTests.configuration(), store: store, mailbox: mailbox) { client in
                let flow = Flow(client: client)
                let account = try await flow.signUp("optional-\(UUID().uuidString.prefix(8))@example.com")
                let device = TestDeviceKey(.es256)
                let registrationId = try await flow.enroll(account.token, device)
                let (_, registered) = try await PasskeyTests.Browser(client: client).register(account.token)
                let passkeyId = try #require(registered.value("passkey", "id"))
                try await body(Account(client: client, flow: flow, account: account, registrationId: registrationId, device: device, passkeyId: passkeyId, mailbox: mailbox))
            }
        }
    }

    @Test(arguments: NulInputTests.databases)
    func thePasswordIsRemovedAndTheAccountSignsInWithoutIt(database: Database) async throws {
        try await Self.withAccount(database) { a in
            let other = try await a.flow.signIn(a.account.email)
            let removed = try await a.client.request(.delete, "/v1/session/password", token: a.account.token)
            #expect(removed.status == .ok)
            #expect(removed.any(["revokedSessions"]) as? Int == 1)
            #expect(try await a.client.request(.get, "/v1/session", token: other).status == .unauthorized)
            let me = try await a.client.request(.get, "/v1/session", token: a.account.token)
            #expect(me.any(["user", "hasPassword"]) as? Bool == false)
            // The old password is now what any wrong password is, with the answer an unknown address gets.
            let old = try await a.client.request(.post, "/v1/sessions", json: ["email": a.account.email, "password": Flow.password])
            let nobody = try await a.client.request(.post, "/v1/sessions", json: ["email": "nobody@example.com", "password": Flow.password])
            #expect(old.status == .unauthorized && old.errorCode == "invalid_credentials")
            #expect(old.errorCode == nobody.errorCode && FreshAuthenticationTests.message(old) == FreshAuthenticationTests.message(nobody))
            // The device key still signs in; the address was told; the trail says so.
            #expect(try await a.flow.login(a.registrationId, a.device).status == .ok)
            let notice = try await a.mailbox.waitForMail(to: a.account.email, kind: "password_changed")
            #expect(notice.text.contains("removed"))
            #expect(try await a.flow.events(a.account.token).contains { $0["type"] as? String == "password.removed" })
            let again = try await a.client.request(.delete, "/v1/session/password", token: a.account.token)
            #expect(again.status == .conflict && again.errorCode == "password_not_set")
            // A password is set again as it is changed.
            let set = try await a.client.request(.put, "/v1/session/password", token: a.account.token, json: ["newPassword": "a brand new passphrase"])
            #expect(set.status == .ok)
            let back = try await a.client.request(.post, "/v1/sessions", json: ["email": a.account.email, "password": "a brand new passphrase"])
            #expect(back.status == .ok && back.any(["user", "hasPassword"]) as? Bool == true)
        }
    }

    @Test(arguments: NulInputTests.databases)
    func theLastCredentialOfAnAccountWithoutAPasswordStays(database: Database) async throws {
        try await Self.withAccount(database) { a in
            #expect(try await a.client.request(.delete, "/v1/session/password", token: a.account.token).status == .ok)
            // Two credentials left: one of them may go, then the other one is the last.
            let passkey = try await a.client.request(.delete, "/v1/passkeys/\(a.passkeyId)", token: a.account.token)
            #expect(passkey.status == .noContent)
            let device = try await a.client.request(.delete, "/v1/biometrics/registrations/\(a.registrationId)", token: a.account.token)
            #expect(device.status == .conflict && device.errorCode == "last_credential")
            #expect(try await a.flow.login(a.registrationId, a.device).status == .ok)
            // An admin may still remove it.
        }
    }

    @Test func aPasswordIsNeverRemovedFromAnAccountWithNothingElse() async throws {
        try await TestServer.run { client in
            let account = try await Flow(client: client).signUp()
            let refused = try await client.request(.delete, "/v1/session/password", token: account.token)
            #expect(refused.status == .conflict && refused.errorCode == "last_credential")
            #expect(try await client.request(.post, "/v1/sessions", json: ["email": account.email, "password": Flow.password]).status == .ok)
        }
    }

    @Test func aPinOrCodeSessionRemovesNoPassword() async throws {
        try await Self.withAccount { a in
            _ = try await a.flow.setPin(a.account.token, a.registrationId, "1357")
            let pin = try #require(try await a.flow.pinLogin(a.registrationId, "1357").value("session", "token"))
            let refused = try await a.client.request(.delete, "/v1/session/password", token: pin)
            #expect(refused.status == .forbidden && refused.errorCode == "reauthentication_required")
        }
    }

    /// Removing the two last credentials at once: the row lock lets exactly one through, on either engine.
    @Test(arguments: NulInputTests.databases)
    func concurrentRemovalsNeverTakeTheLastCredential(database: Database) async throws {
        try await Self.withAccount(database) { a in
            #expect(try await a.client.request(.delete, "/v1/session/password", token: a.account.token).status == .ok)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                group.addTask { try await a.client.request(.delete, "/v1/passkeys/\(a.passkeyId)", token: a.account.token).status }
                group.addTask {
                    try await a.client.request(.delete, "/v1/biometrics/registrations/\(a.registrationId)", token: a.account.token).status
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .noContent }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == .conflict }.count == 1, "\(statuses)")
        }
    }
}
