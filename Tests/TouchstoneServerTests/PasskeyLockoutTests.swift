import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// Consecutive wrong signatures lock a passkey (423 `passkey_locked`); its owner unlocks it after a password sign-in.
struct PasskeyLockoutTests {
    /// A new database for each test (a stored property would share one file between tests running in parallel).
    static var configuration: TouchstoneConfiguration { PasskeyTests.configuration { $0.lockoutThreshold = 3 } }

    /// An assertion by `credential` whose signature was altered.
    private func wrongSignature(_ browser: PasskeyTests.Browser, _ credential: inout VirtualAuthenticator.Credential) async throws
        -> JSONTestResponse
    {
        let options = try await browser.client.request(.post, "/v1/passkeys/authentications/options", json: [:])
        let response = try browser.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any])
        var inner = try #require(object["response"] as? [String: Any])
        var signature = try #require((inner["signature"] as? String).flatMap { Base64.decode($0) })
        signature[signature.count - 3] ^= 1
        inner["signature"] = Base64.urlEncode(signature)
        object["response"] = inner
        return try await browser.client.request(
            .post, "/v1/passkeys/authentications/verify", raw: String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }

    @Test func wrongSignaturesLockAPasskeyUntilItsOwnerUnlocksIt() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let account = try await Flow(client: client).signUp()
            let browser = PasskeyTests.Browser(client: client)
            var (credential, registered) = try await browser.register(account.token)
            let passkeyId = try #require(registered.value("passkey", "id"))
            for _ in 0..<3 { #expect(try await self.wrongSignature(browser, &credential).errorCode == "invalid_passkey_assertion") }

            let locked = try await browser.signIn(&credential)
            #expect(locked.status.code == 423)
            #expect(locked.errorCode == "passkey_locked")
            let list = try await client.request(.get, "/v1/passkeys", token: account.token)
            #expect((list.json["passkeys"] as? [[String: Any]])?.first?["locked"] as? Bool == true)

            let unlock = try await client.request(.post, "/v1/passkeys/\(passkeyId)/unlock", token: account.token)
            #expect(unlock.status == .ok)
            #expect((unlock.json["passkey"] as? [String: Any])?["locked"] as? Bool == false)
            #expect(try await browser.signIn(&credential).status == .ok)
            let again = try await client.request(.post, "/v1/passkeys/\(passkeyId)/unlock", token: account.token)
            #expect(again.status == .conflict)
            #expect(again.errorCode == "passkey_not_locked")
        }
    }

    @Test func aSuccessResetsTheCountAndOtherFailuresDoNotCount() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let account = try await Flow(client: client).signUp()
            let browser = PasskeyTests.Browser(client: client)
            var (credential, _) = try await browser.register(account.token)
            for _ in 0..<2 { _ = try await self.wrongSignature(browser, &credential) }
            #expect(try await browser.signIn(&credential).status == .ok)
            for _ in 0..<2 { _ = try await self.wrongSignature(browser, &credential) }
            // From another origin: refused before the signature is checked, so not counted.
            let options = try await client.request(.post, "/v1/passkeys/authentications/options", json: [:])
            let foreign = try browser.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: "https://evil.example")
            let refused = try await client.request(.post, "/v1/passkeys/authentications/verify", raw: String(decoding: foreign, as: UTF8.self))
            #expect(refused.errorCode == "invalid_passkey_assertion")
            #expect(try await browser.signIn(&credential).status == .ok)
        }
    }

    @Test func onlyTheOwnerUnlocks() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let other = try await flow.signUp()
            let browser = PasskeyTests.Browser(client: client)
            var (credential, registered) = try await browser.register(account.token)
            let passkeyId = try #require(registered.value("passkey", "id"))
            for _ in 0..<3 { _ = try await self.wrongSignature(browser, &credential) }
            let stranger = try await client.request(.post, "/v1/passkeys/\(passkeyId)/unlock", token: other.token)
            #expect(stranger.status == .notFound)
            #expect(stranger.errorCode == "passkey_not_found")
        }
    }
}

/// The passkey options for an email do not reveal whether it has an account or passkeys.
struct PasskeyEnumerationTests {
    @Test func emailsWithoutPasskeysGetAStableDecoy() async throws {
        try await TestServer.run(configuration: PasskeyTests.configuration()) { client in
            let flow = Flow(client: client)
            let withoutPasskeys = try await flow.signUp()
            let withPasskey = try await flow.signUp()
            let (_, registered) = try await PasskeyTests.Browser(client: client).register(withPasskey.token)
            #expect(registered.status == .created)
            func allowed(_ email: String) async throws -> [String] {
                let options = try await client.request(.post, "/v1/passkeys/authentications/options", json: ["email": email])
                return (options.json["allowCredentials"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            }
            let ghost = try await allowed("nobody@example.com")
            let none = try await allowed(withoutPasskeys.email)
            let real = try await allowed(withPasskey.email)
            #expect(ghost.count == 1 && none.count == 1 && real.count == 1)
            #expect(ghost != none)
            #expect(try await allowed("nobody@example.com") == ghost)  // stable: asking twice reveals nothing
            #expect(try await allowed("NOBODY@example.com") == ghost)  // normalised like the real lookup
            // A malformed address is refused like everywhere else (which tells nothing about accounts).
            let malformed = try await client.request(.post, "/v1/passkeys/authentications/options", json: ["email": "nobody@example.com "])
            #expect(malformed.status == .badRequest && malformed.errorCode == "invalid_request")
            #expect(ghost.first?.count == 22)  // 16 bytes base64url, like a typical credential id
        }
    }
}
