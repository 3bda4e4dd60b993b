import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

struct PasskeyTests {
    static let origin = "https://app.example"

    static func configuration(_ customize: (inout TouchstoneConfiguration) -> Void = { _ in }) -> TouchstoneConfiguration {
        TestServer.configuration {
            $0.passkeys.rpId = "app.example"
            $0.passkeys.rpName = "Example App"
            $0.passkeys.origins = [origin]
            customize(&$0)
        }
    }

    /// An assertion's JSON (`credential.toJSON()`) with the last byte of its signature changed: well formed, and it
    /// does not verify.
    static func damagingSignature(of assertion: [UInt8]) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(assertion)) as? [String: Any])
        var response = try #require(object["response"] as? [String: Any])
        let encoded = try #require(response["signature"] as? String)
        var signature = try #require(Base64.decode(encoded))
        signature[signature.count - 1] ^= 0x01
        response["signature"] = Base64.urlEncode(signature)
        object["response"] = response
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// Steps of the passkey API driven by a virtual authenticator.
    struct Browser {
        let client: any TestClientProtocol
        var authenticator = VirtualAuthenticator()

        func options(_ token: String) async throws -> JSONTestResponse {
            try await self.client.request(.post, "/v1/passkeys/registrations/options", token: token, json: [:])
        }

        /// Registers a passkey and returns the credential and the server's answer.
        func register(_ token: String, name: String? = nil) async throws -> (VirtualAuthenticator.Credential, JSONTestResponse) {
            let options = try await self.options(token)
            try #require(options.status == .ok, "options failed: \(String(decoding: options.body, as: UTF8.self))")
            var (credential, response) = try self.authenticator.respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
            if let name {
                var object = try #require(try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any])
                object["name"] = name
                response = Array(try JSONSerialization.data(withJSONObject: object))
            }
            _ = credential
            let verify = try await self.client.request(.post, "/v1/passkeys/registrations/verify", token: token, raw: String(decoding: response, as: UTF8.self))
            return (credential, verify)
        }

        /// Signs in with `credential`; `email` asks for an allow list.
        func signIn(_ credential: inout VirtualAuthenticator.Credential, email: String? = nil) async throws -> JSONTestResponse {
            let options = try await self.client.request(
                .post, "/v1/passkeys/authentications/options", json: email.map { ["email": $0] } ?? [:])
            try #require(options.status == .ok)
            let response = try self.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
            return try await self.client.request(.post, "/v1/passkeys/authentications/verify", raw: String(decoding: response, as: UTF8.self))
        }
    }

    @Test func creationOptionsAreSpecShaped() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let account = try await Flow(client: client).signUp("opts@example.com")
            let options = try await Browser(client: client).options(account.token)
            #expect(options.status == .ok)
            #expect(options.value("rp", "id") == "app.example")
            #expect(options.value("rp", "name") == "Example App")
            #expect(options.value("user", "name") == "opts@example.com")
            #expect(options.value("user", "id").flatMap { Base64.decode($0) } == Array(account.userId.utf8))
            #expect(options.value("challenge").flatMap { Base64.decode($0) }?.count == 32)
            #expect(options.any(["timeout"]) as? Int == 300_000)
            #expect(options.value("attestation") == "none")
            #expect(options.value("authenticatorSelection", "residentKey") == "required")
            #expect(options.value("authenticatorSelection", "userVerification") == "preferred")
            let algorithms = (options.any(["pubKeyCredParams"]) as? [[String: Any]])?.compactMap { $0["alg"] as? Int }
            #expect(algorithms?.first == -7)
            #expect(algorithms?.contains(-65535) == false)
        }
    }

    @Test func registerSignInListRenameDelete() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let account = try await Flow(client: client).signUp("pk@example.com")
            let browser = Browser(client: client)
            var (credential, registered) = try await browser.register(account.token, name: "Laptop")
            #expect(registered.status == .created)
            let passkeyId = try #require(registered.value("passkey", "id"))
            #expect(registered.value("passkey", "name") == "Laptop")
            #expect(registered.value("passkey", "aaguid") == "00000000-0000-0000-0000-000000000000")
            #expect(registered.any(["passkey", "backupEligible"]) as? Bool == true)
            #expect(registered.any(["passkey", "backedUp"]) as? Bool == true)

            // Discoverable (username-less) sign-in, then with an allow list.
            clock.advance(by: 30)
            let discoverable = try await browser.signIn(&credential)
            #expect(discoverable.status == .ok)
            #expect(discoverable.value("user", "id") == account.userId)
            #expect(discoverable.any(["session", "methods"]) as? [String] == ["passkey"])
            let named = try await browser.signIn(&credential, email: "PK@example.com")
            #expect(named.status == .ok)

            // Excluded on the next registration attempt.
            let options = try await browser.options(account.token)
            let excluded = (options.any(["excludeCredentials"]) as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(excluded == [Base64.urlEncode(credential.id)])

            let list = try await client.request(.get, "/v1/passkeys", token: account.token)
            let passkeys = try #require(list.json["passkeys"] as? [[String: Any]])
            #expect(passkeys.count == 1)
            #expect(passkeys[0]["lastUsedAt"] as? String == "2027-01-15T08:00:30.000Z")

            let renamed = try await client.request(.patch, "/v1/passkeys/\(passkeyId)", token: account.token, json: ["name": "Work laptop"])
            #expect(renamed.value("passkey", "name") == "Work laptop")
            #expect(try await client.request(.delete, "/v1/passkeys/\(passkeyId)", token: account.token).status == .noContent)

            // A deleted passkey cannot sign in.
            let gone = try await browser.signIn(&credential)
            #expect(gone.status == .unauthorized)
            #expect(gone.errorCode == "passkey_not_found")
        }
    }

    @Test func managementIsScopedToTheOwner() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let flow = Flow(client: client)
            let owner = try await flow.signUp()
            let other = try await flow.signUp()
            let (_, registered) = try await Browser(client: client).register(owner.token)
            let id = try #require(registered.value("passkey", "id"))
            for response in [
                try await client.request(.patch, "/v1/passkeys/\(id)", token: other.token, json: ["name": "x"]),
                try await client.request(.delete, "/v1/passkeys/\(id)", token: other.token),
                try await client.request(.delete, "/v1/passkeys/unknown", token: owner.token),
            ] {
                #expect(response.status == .notFound)
                #expect(response.errorCode == "passkey_not_found")
            }
            #expect(try await client.request(.get, "/v1/passkeys").errorCode == "unauthenticated")
            #expect(try await client.request(.post, "/v1/passkeys/registrations/options", json: [:]).errorCode == "unauthenticated")
        }
    }

    @Test func registrationOptionsNeedARecentPassword() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let account = try await Flow(client: client).signUp()
            clock.advance(by: 11 * 60)
            let options = try await Browser(client: client).options(account.token)
            #expect(options.status == .forbidden)
            #expect(options.errorCode == "reauthentication_required")
        }
    }

    @Test func registrationFromAnotherOriginIsRejectedNamingTheStep() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let account = try await Flow(client: client).signUp()
            let options = try await Browser(client: client).options(account.token)
            let (_, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: "https://phish.example")
            let verify = try await client.request(.post, "/v1/passkeys/registrations/verify", token: account.token, raw: String(decoding: response, as: UTF8.self))
            #expect(verify.status == .badRequest)
            #expect(verify.errorCode == "invalid_passkey_registration")
            #expect(((verify.json["error"] as? [String: Any])?["message"] as? String)?.hasPrefix("origin_not_allowed") == true)
        }
    }

    @Test func registrationChallengesAreSingleUseExpiringAndBoundToTheUser() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let intruder = try await flow.signUp()
            let authenticator = VirtualAuthenticator()
            let options = try await Browser(client: client).options(account.token)
            let (_, response) = try authenticator.respond(toCreationOptions: Array(options.body), origin: Self.origin)
            let body = String(decoding: response, as: UTF8.self)
            // Another user cannot use it (and burns it).
            let stolen = try await client.request(.post, "/v1/passkeys/registrations/verify", token: intruder.token, raw: body)
            #expect(stolen.errorCode == "challenge_not_found")
            let replay = try await client.request(.post, "/v1/passkeys/registrations/verify", token: account.token, raw: body)
            #expect(replay.status == .unauthorized)
            #expect(replay.errorCode == "challenge_not_found")

            let late = try await Browser(client: client).options(account.token)
            let (_, lateResponse) = try authenticator.respond(toCreationOptions: Array(late.body), origin: Self.origin)
            clock.advance(by: 301)
            let expired = try await client.request(
                .post, "/v1/passkeys/registrations/verify", token: account.token, raw: String(decoding: lateResponse, as: UTF8.self))
            #expect(expired.status == .unauthorized)
            #expect(expired.errorCode == "challenge_expired")
        }
    }

    @Test func aCredentialCannotBeRegisteredTwice() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let account = try await Flow(client: client).signUp()
            let (credential, first) = try await Browser(client: client).register(account.token)
            #expect(first.status == .created)
            let options = try await Browser(client: client).options(account.token)
            let challenge = try #require(options.value("challenge").flatMap { Base64.decode($0) })
            let again = VirtualAuthenticator().register(
                rpId: "app.example", origin: Self.origin, challenge: challenge, userHandle: Array(account.userId.utf8),
                credentialId: credential.id)
            let id = Base64.urlEncode(credential.id)
            let response = try await client.request(
                .post, "/v1/passkeys/registrations/verify", token: account.token,
                json: [
                    "id": id, "rawId": id, "type": "public-key",
                    "response": [
                        "clientDataJSON": Base64.urlEncode(again.clientDataJSON),
                        "attestationObject": Base64.urlEncode(again.attestationObject),
                    ] as [String: String],
                ])
            #expect(response.status == .conflict)
            #expect(response.errorCode == "passkey_already_registered")
        }
    }

    @Test func tamperedAssertionsAreRejected() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let account = try await Flow(client: client).signUp("tamper@example.com")
            let browser = Browser(client: client)
            var (credential, _) = try await browser.register(account.token)
            let options = try await client.request(.post, "/v1/passkeys/authentications/options", json: [:])
            let response = try browser.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: Self.origin)
            var object = try #require(try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any])
            var inner = try #require(object["response"] as? [String: Any])
            var signature = try #require((inner["signature"] as? String).flatMap { Base64.decode($0) })
            signature[signature.count - 3] ^= 1
            inner["signature"] = Base64.urlEncode(signature)
            object["response"] = inner
            let tampered = try await client.request(
                .post, "/v1/passkeys/authentications/verify", raw: String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
            #expect(tampered.status == .unauthorized)
            #expect(tampered.errorCode == "invalid_passkey_assertion")
            // The challenge was consumed by the failed attempt.
            let replay = try await client.request(.post, "/v1/passkeys/authentications/verify", raw: String(decoding: response, as: UTF8.self))
            #expect(replay.errorCode == "challenge_not_found")
        }
    }

    @Test func anAllowListForOneAccountRejectsAnotherAccountsPasskey() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let flow = Flow(client: client)
            let alice = try await flow.signUp("alice@example.com")
            let bob = try await flow.signUp("bob@example.com")
            let browser = Browser(client: client)
            _ = try await browser.register(alice.token)
            var (bobsCredential, _) = try await browser.register(bob.token)
            // Options for Alice, answered with Bob's passkey (the virtual authenticator would refuse; force it).
            let options = try await client.request(.post, "/v1/passkeys/authentications/options", json: ["email": "alice@example.com"])
            var object = try #require(try JSONSerialization.jsonObject(with: Data(options.body)) as? [String: Any])
            object["allowCredentials"] = []
            let response = try browser.authenticator.respond(
                toRequestOptions: Array(try JSONSerialization.data(withJSONObject: object)), credential: &bobsCredential, origin: Self.origin)
            let verify = try await client.request(.post, "/v1/passkeys/authentications/verify", raw: String(decoding: response, as: UTF8.self))
            // The challenge was issued for Alice's account (its MAC covers it): for Bob's passkey it is unknown.
            #expect(verify.status == .unauthorized)
            #expect(verify.errorCode == "challenge_not_found")
            #expect(verify.json["error"].flatMap { ($0 as? [String: Any])?["message"] as? String }?.contains("account") == true)
        }
    }

    /// A passkey sign-in's options store nothing: the challenge carries its expiry and, under its MAC, the account it is
    /// for (any account when no email was given). Altered, made-up (another key), another account's and expired
    /// challenges are refused; an answered one is recorded, once.
    @Test func signInChallengesAreRecordedOnlyWhenAnsweredAndBoundToTheirAccount() async throws {
        let clock = ManualClock()
        let database = TemporaryFiles.path("passkey-challenges", suffix: ".sqlite")
        defer { TemporaryFiles.remove(database) }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: database), logger: Logger(label: "test"))
        try await store.migrate()
        let kek = [UInt8](repeating: 6, count: 32)
        try await TestServer.run(configuration: Self.configuration { $0.tokens.keyEncryptionKey = kek }, clock: clock, store: store) { client in
            let account = try await Flow(client: client).signUp("mac@example.com")
            let browser = Browser(client: client)
            var (credential, _) = try await browser.register(account.token)
            let credentialId = Base64.urlEncode(credential.id)
            func options(email: String? = nil) async throws -> String {
                let options = try await client.request(.post, "/v1/passkeys/authentications/options", json: email.map { ["email": $0] } ?? [:])
                return try #require(options.value("challenge"))
            }
            // A credential the server never registered (created, not verified).
            let creation = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            var (stranger, _) = try VirtualAuthenticator().respond(toCreationOptions: Array(creation.body), origin: Self.origin)
            func answer(_ challenge: String, unknownCredential: Bool = false) async throws -> JSONTestResponse {
                let requestOptions: [String: Any] = ["challenge": challenge, "rpId": "app.example", "allowCredentials": []]
                let body = Array(try JSONSerialization.data(withJSONObject: requestOptions))
                let assertion = unknownCredential
                    ? try VirtualAuthenticator().respond(toRequestOptions: body, credential: &stranger, origin: Self.origin)
                    : try browser.authenticator.respond(toRequestOptions: body, credential: &credential, origin: Self.origin)
                return try await client.request(.post, "/v1/passkeys/authentications/verify", raw: String(decoding: assertion, as: UTF8.self))
            }

            let issued = try await options()
            #expect(issued.count == 55)
            #expect(try await store.passkeySignInAttempt(credentialId: credentialId, challenge: issued)?.challengeUsed == false)
            var bytes = try #require(Base64.urlDecodeCanonical(issued))
            bytes[8] ^= 1  // the expiry, moved
            let madeUp = SelfContainedChallenges(derivingFrom: SymmetricKey(data: [UInt8](repeating: 7, count: 32)), purpose: "touchstone passkey sign-in challenge v1")
                .issue(for: "any", expiresAtMillis: Int64.max, nonce: [UInt8](repeating: 0, count: 16))
            // Bound to an address without an account, and to another account.
            let other = try await Flow(client: client).signUp("other@example.com")
            _ = try await browser.register(other.token)
            let refused = [
                try await answer(Base64.urlEncode(bytes)), try await answer(madeUp), try await answer(try await options(email: "nobody@example.com")),
                try await answer(try await options(email: "other@example.com")),
            ]
            #expect(refused.map(\.errorCode) == Array(repeating: "challenge_not_found", count: 4))
            #expect(try await store.passkey(credentialId: credentialId)?.failedAttempts == 0)

            // Its own account's, and any account's: signed in; the answered challenge is recorded, once.
            #expect(try await answer(try await options(email: "MAC@example.com")).status == .ok)
            #expect(try await answer(issued).status == .ok)
            #expect(try await store.passkeySignInAttempt(credentialId: credentialId, challenge: issued)?.challengeUsed == true)
            #expect(try await answer(issued).errorCode == "challenge_not_found")

            // An unknown credential uses up a challenge issued for any account; one issued for an account cannot be
            // checked without a passkey of it, and stays answerable.
            let anyAccount = try await options()
            #expect(try await answer(anyAccount, unknownCredential: true).errorCode == "passkey_not_found")
            #expect(try await answer(anyAccount).errorCode == "challenge_not_found")
            let forAccount = try await options(email: "mac@example.com")
            #expect(try await answer(forAccount, unknownCredential: true).errorCode == "passkey_not_found")
            #expect(try await answer(forAccount).status == .ok)

            // At the end of the ceremony's timeout, expired (and nothing to record), whichever credential answers.
            let late = try await options()
            clock.advance(by: 300)
            #expect(try await answer(late, unknownCredential: true).errorCode == "challenge_expired")
            #expect(try await answer(late).errorCode == "challenge_expired")
            #expect(try await store.passkeySignInAttempt(credentialId: credentialId, challenge: late)?.challengeUsed == false)
        }
    }

    @Test func malformedResponsesAreInvalidRequests() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let bad = try await client.request(
                .post, "/v1/passkeys/authentications/verify",
                json: ["id": "x", "rawId": "x", "type": "public-key", "response": ["clientDataJSON": "!!", "authenticatorData": "", "signature": ""]])
            #expect(bad.status == .badRequest)
            #expect(bad.errorCode == "invalid_request")
            let notJSON = try await client.request(
                .post, "/v1/passkeys/authentications/verify",
                json: [
                    "id": "x", "rawId": "eA", "type": "public-key",
                    "response": ["clientDataJSON": Base64.urlEncode(Array("nope".utf8)), "authenticatorData": "AA", "signature": "AA"],
                ])
            #expect(notJSON.status == .unauthorized)
            #expect(notJSON.errorCode == "invalid_passkey_assertion")
        }
    }
}
