import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneAuth
import TouchstoneConfirmation
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// Transaction confirmations through the HTTP API: what is signed, who may approve, and every error code.
struct ConfirmationTests {
    static func configuration(_ customize: (inout TouchstoneConfiguration) -> Void = { _ in }) -> TouchstoneConfiguration {
        AccessTokenTests.configuration {
            $0.lockoutThreshold = 3
            customize(&$0)
        }
    }

    static let details: [String: any Sendable] = ["amount": "120.00", "currency": "EUR", "payee": ["name": "ACME Ltd", "iban": "DE89370400440532013000"]]

    /// A user with an enrolled device key.
    struct Owner {
        var account: Flow.Account
        var device: TestDeviceKey
        var registrationId: String
    }

    static func owner(_ client: any TestClientProtocol, _ email: String) async throws -> Owner {
        let flow = Flow(client: client)
        let account = try await flow.signUp(email)
        let device = TestDeviceKey(.es256)
        return Owner(account: account, device: device, registrationId: try await flow.enroll(account.token, device))
    }

    static func create(
        _ client: any TestClientProtocol,
        token: String,
        summary: String = "Pay €120.00 to ACME Ltd",
        extra: [String: any Sendable] = [:]
    ) async throws -> JSONTestResponse {
        var body: [String: any Sendable] = ["summary": summary, "details": Self.details]
        body.merge(extra) { $1 }
        return try await client.request(.post, "/v1/confirmations", token: token, json: body)
    }

    /// Creates a confirmation and returns its id and payload.
    static func pending(_ client: any TestClientProtocol, _ owner: Owner) async throws -> (id: String, payload: String) {
        let created = try await Self.create(client, token: owner.account.token)
        try #require(created.status == .created, "create failed: \(String(decoding: created.body, as: UTF8.self))")
        return (try #require(created.value("confirmation", "id")), try #require(created.value("payload")))
    }

    static func approve(_ client: any TestClientProtocol, _ id: String, registrationId: String, signature: String, token: String? = nil)
        async throws -> JSONTestResponse
    {
        try await client.request(
            .post,
            "/v1/confirmations/\(id)/approve",
            token: token,
            json: ["registrationId": registrationId, "signature": signature]
        )
    }

    static func sign(_ device: TestDeviceKey, _ payload: String) -> String { device.signed(payload) }

    @Test func aConfirmationIsMadeWithItsCanonicalPayload() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let owner = try await Self.owner(client, "made@example.com")
            let created = try await Self.create(client, token: owner.account.token, extra: ["ttlSeconds": 600])
            #expect(created.status == .created)
            #expect(created.value("confirmation", "status") == "pending")
            #expect(created.value("confirmation", "summary") == "Pay €120.00 to ACME Ltd")
            #expect((created.any(["confirmation", "details"]) as? [String: Any])?["currency"] as? String == "EUR")
            let payloadText = try #require(created.value("payload"))
            let payload = try ConfirmationPayload(text: payloadText)
            #expect(payload.confirmationId == created.value("confirmation", "id"))
            #expect(payload.userId == owner.account.userId)
            #expect(payload.rpId == "app.example")
            #expect(payload.summary == "Pay €120.00 to ACME Ltd")
            #expect(Base64.decode(payload.challenge)?.count == 32)
            // The test clock starts at 2027-01-15T08:00:00Z; ttlSeconds 600.
            #expect(payload.expiresAt == "2027-01-15T08:10:00Z")
            #expect(payloadText.hasPrefix(#"{"challenge":""#) && payloadText.hasSuffix(#","version":1}"#))
        }
    }

    @Test func theDeviceKeyApprovesOnceWithAReceiptAndEvidence() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let owner = try await Self.owner(client, "approve@example.com")
            let (id, payload) = try await Self.pending(client, owner)
            let approved = try await Self.approve(client, id, registrationId: owner.registrationId, signature: Self.sign(owner.device, payload))
            #expect(approved.status == .ok)
            #expect(approved.value("confirmation", "status") == "approved")
            #expect(approved.value("confirmation", "method") == "biometric")
            #expect(approved.value("confirmation", "registrationId") == owner.registrationId)
            #expect(approved.value("confirmation", "approvedAt") != nil)

            // The receipt verifies offline with the JWKS.
            let receipt = try #require(approved.value("receipt"))
            #expect(try SignedToken.header(of: receipt).typ == "confirmation+jwt")
            let jwks = try await client.request(.get, "/.well-known/jwks.json")
            let verifier = ConfirmationReceiptVerifier(
                keys: StaticKeySet(try await VerificationKey.keys(fromJWKS: jwks.body)),
                issuer: AccessTokenTests.issuer,
                audiences: [AccessTokenTests.issuer]
            )
            let claims = try await verifier.verify(receipt, confirmationId: id)
            #expect(claims.subject == owner.account.userId)
            #expect(claims.method == "biometric" && claims.methods == ["hwk", "user"])
            #expect(claims.payloadSHA256 == ConfirmationEvidence.sha256(payload))
            #expect(try SignedToken.unverifiedPayload(of: receipt, as: [String: AnyCodableValue].self)["exp"] == nil)

            // Evidence, checked without the server.
            let evidenceAnswer = try await client.request(.get, "/v1/confirmations/\(id)/evidence", token: owner.account.token)
            #expect(evidenceAnswer.status == .ok)
            let evidence = try JSONDecoder().decode([String: ConfirmationEvidence].self, from: evidenceAnswer.body)["evidence"]
            let verified = try #require(evidence).verify()
            #expect(verified.payload.summary == "Pay €120.00 to ACME Ltd")
            #expect(evidence?.payload == payload)

            // Once only.
            let again = try await Self.approve(client, id, registrationId: owner.registrationId, signature: Self.sign(owner.device, payload))
            #expect(again.status == .conflict && again.errorCode == "confirmation_not_pending")
            #expect(try await client.request(.get, "/v1/confirmations/\(id)", token: owner.account.token).value("confirmation", "status") == "approved")

            // Audited with the payload's hash, never the details.
            let events = try await Flow(client: client).events(owner.account.token)
            let approvedEvent = try #require(events.first { $0["type"] as? String == "confirmation.approved" })
            #expect((approvedEvent["reason"] as? String)?.contains(ConfirmationEvidence.sha256(payload)) == true)
            #expect(!String(decoding: try JSONSerialization.data(withJSONObject: events), as: UTF8.self).contains("DE89370400440532013000"))
        }
    }

    @Test func everyRuleHasItsErrorCode() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let owner = try await Self.owner(client, "rules@example.com")
            let other = try await Self.owner(client, "other@example.com")

            // Unknown confirmation.
            let unknown = try await Self.approve(client, "no-such-id", registrationId: owner.registrationId, signature: "AAAA")
            #expect(unknown.status == .notFound && unknown.errorCode == "confirmation_not_found")

            // Another user's key.
            let (id, payload) = try await Self.pending(client, owner)
            let foreign = try await Self.approve(client, id, registrationId: other.registrationId, signature: Self.sign(other.device, payload))
            #expect(foreign.status == .forbidden && foreign.errorCode == "registration_not_allowed")

            // A wrong signature: stays pending and approvable, counts toward the lockout.
            let wrong = try await Self.approve(client, id, registrationId: owner.registrationId, signature: Self.sign(TestDeviceKey(.es256), payload))
            #expect(wrong.status == .unauthorized && wrong.errorCode == "invalid_signature")
            #expect(try await client.request(.get, "/v1/confirmations/\(id)", token: owner.account.token).value("confirmation", "status") == "pending")
            // A signature over other text is wrong too.
            let otherText = try await Self.approve(client, id, registrationId: owner.registrationId, signature: Self.sign(owner.device, payload + " "))
            #expect(otherText.errorCode == "invalid_signature")
            // The third failure locks the registration (threshold 3).
            _ = try await Self.approve(client, id, registrationId: owner.registrationId, signature: Self.sign(TestDeviceKey(.es256), payload))
            let locked = try await Self.approve(client, id, registrationId: owner.registrationId, signature: Self.sign(owner.device, payload))
            #expect(locked.status.code == 423 && locked.errorCode == "registration_locked")

            // A revoked registration.
            let (id2, payload2) = try await Self.pending(client, other)
            #expect(try await client.request(.delete, "/v1/biometrics/registrations/\(other.registrationId)", token: other.account.token).status == .noContent)
            let revoked = try await Self.approve(client, id2, registrationId: other.registrationId, signature: Self.sign(other.device, payload2))
            #expect(revoked.status == .unauthorized && revoked.errorCode == "registration_revoked")

            // Declined, then neither approvable nor declinable.
            let third = try await Self.owner(client, "third@example.com")
            let (id3, payload3) = try await Self.pending(client, third)
            let declined = try await client.request(.post, "/v1/confirmations/\(id3)/decline", token: third.account.token)
            #expect(declined.status == .ok && declined.value("confirmation", "status") == "declined")
            #expect(declined.value("confirmation", "declinedAt") != nil)
            #expect(try await Self.approve(client, id3, registrationId: third.registrationId, signature: Self.sign(third.device, payload3)).errorCode
                == "confirmation_not_pending")
            #expect(try await client.request(.post, "/v1/confirmations/\(id3)/decline", token: third.account.token).errorCode == "confirmation_not_pending")
            // Evidence exists only for an approval.
            let noEvidence = try await client.request(.get, "/v1/confirmations/\(id3)/evidence", token: third.account.token)
            #expect(noEvidence.status == .conflict && noEvidence.errorCode == "confirmation_not_pending")

            // Expired.
            let (id4, payload4) = try await Self.pending(client, third)
            clock.advance(by: 301)
            let expired = try await Self.approve(client, id4, registrationId: third.registrationId, signature: Self.sign(third.device, payload4))
            #expect(expired.status == .gone && expired.errorCode == "confirmation_expired")
            #expect(try await client.request(.get, "/v1/confirmations/\(id4)", token: third.account.token).value("confirmation", "status") == "expired")
            #expect(try await client.request(.post, "/v1/confirmations/\(id4)/decline", token: third.account.token).errorCode == "confirmation_expired")

            // Another user's session sees nothing; no session at all is 401.
            #expect(try await client.request(.get, "/v1/confirmations/\(id4)", token: owner.account.token).errorCode == "confirmation_not_found")
            #expect(try await client.request(.get, "/v1/confirmations/\(id4)").errorCode == "unauthenticated")
            // A session sent with an approval must be the owner's.
            let (id5, payload5) = try await Self.pending(client, third)
            let wrongSession = try await Self.approve(
                client, id5, registrationId: third.registrationId, signature: Self.sign(third.device, payload5), token: owner.account.token)
            #expect(wrongSession.errorCode == "confirmation_not_found")
            #expect(try await Self.approve(
                client, id5, registrationId: third.registrationId, signature: Self.sign(third.device, payload5), token: third.account.token).status == .ok)

            // A user without passkeys asks for passkey options.
            let (id6, _) = try await Self.pending(client, third)
            let noPasskeys = try await client.request(.post, "/v1/confirmations/\(id6)/passkey-options", token: third.account.token)
            #expect(noPasskeys.status == .conflict && noPasskeys.errorCode == "no_passkeys")
        }
    }

    @Test func moreRefusals() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, adminKey, _ in
            let owner = try await Self.owner(client, "more@example.com")
            let (id, payload) = try await Self.pending(client, owner)
            // An unknown registration.
            let unknown = try await Self.approve(client, id, registrationId: "no-such-registration", signature: Self.sign(owner.device, payload))
            #expect(unknown.status == .notFound && unknown.errorCode == "registration_not_found")
            // Something that looks like an admin key but is none.
            let fake = try await client.request(.get, "/v1/confirmations/\(id)", token: "tsa_not-a-key")
            #expect(fake.status == .unauthorized && fake.errorCode == "unauthenticated")
            // Passkey options are for the user's own session, not for service callers.
            let service = try await client.request(.post, "/v1/confirmations/\(id)/passkey-options", token: adminKey)
            #expect(service.status == .unauthorized && service.errorCode == "unauthenticated")
            // A body that is not an assertion.
            let malformed = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: #"{"id": 1}"#)
            #expect(malformed.status == .badRequest && malformed.errorCode == "invalid_request")
        }
    }

    @Test func aWrongPasskeySignatureOrAnUnknownPasskeyLeavesItPending() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let owner = try await Self.owner(client, "pk-wrong@example.com")
            let browser = PasskeyTests.Browser(client: client)
            var (credential, registered) = try await browser.register(owner.account.token)
            try #require(registered.status == .created)
            let (id, _) = try await Self.pending(client, owner)
            let options = try await client.request(.post, "/v1/confirmations/\(id)/passkey-options", token: owner.account.token)
            let assertion = try browser.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
            let wrong = try await client.request(
                .post, "/v1/confirmations/\(id)/passkey-verify", raw: try PasskeyTests.damagingSignature(of: assertion))
            #expect(wrong.status == .unauthorized && wrong.errorCode == "invalid_signature")
            // A credential the server does not know.
            var stranger = VirtualAuthenticator().register(rpId: "app.example", origin: PasskeyTests.origin, challenge: [1], userHandle: [1]).credential
            let unknownAssertion = try VirtualAuthenticator().respond(
                toRequestOptions: Array(try JSONSerialization.data(withJSONObject: ["challenge": options.value("challenge") ?? "", "rpId": "app.example"])),
                credential: &stranger,
                origin: PasskeyTests.origin
            )
            let unknown = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: String(decoding: unknownAssertion, as: UTF8.self))
            #expect(unknown.status == .unauthorized && unknown.errorCode == "passkey_not_found")
            #expect(try await client.request(.get, "/v1/confirmations/\(id)", token: owner.account.token).value("confirmation", "status") == "pending")
        }
    }

    @Test(arguments: [
        (["summary": ""], "summary"),
        (["summary": String(repeating: "x", count: 201)], "summary"),
        (["summary": "Pay \u{202E}00.021€"], "summary"),
        (["summary": "Pay\u{0085}"], "summary"),
        (["summary": 5], "summary"),
        (["summary": "ok", "details": "text"], "details"),
        (["summary": "ok", "details": ["note": "bell\u{0007}"]], "details.note"),
        (["summary": "ok", "details": ["n": 12345678901234567]], "details.n"),
        (["summary": "ok", "ttlSeconds": 5], "ttlSeconds"),
        (["summary": "ok", "ttlSeconds": 3601], "ttlSeconds"),
        (["summary": "ok", "ttlSeconds": 30.5], "ttlSeconds"),
        (["summary": "ok", "colour": "blue"], "colour"),
    ] as [([String: any Sendable], String)])
    func badInputNamesTheField(body: [String: any Sendable], field: String) async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let account = try await Flow(client: client).signUp("bad@example.com")
            let response = try await client.request(.post, "/v1/confirmations", token: account.token, json: body)
            #expect(response.status == .badRequest && response.errorCode == "invalid_request")
            let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains(field), "\(message)")
        }
    }

    @Test func rawTextTheParserRefuses() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let account = try await Flow(client: client).signUp("raw@example.com")
            for raw in [#"{"summary": "a", "summary": "b"}"#, #"{"summary": "\ud800"}"#, #"{"summary": "ok", "details": null}"#, "not json"] {
                let response = try await client.request(.post, "/v1/confirmations", token: account.token, raw: raw)
                #expect(response.status == .badRequest && response.errorCode == "invalid_request", "\(raw)")
            }
        }
    }

    @Test func theAppsBackendMakesConfirmationsWithAnAdminKey() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, adminKey, _ in
            let owner = try await Self.owner(client, "service@example.com")
            let created = try await Self.create(client, token: adminKey, extra: ["userId": owner.account.userId])
            #expect(created.status == .created)
            let id = try #require(created.value("confirmation", "id"))
            #expect(try await client.request(.get, "/v1/confirmations/\(id)", token: adminKey).value("confirmation", "status") == "pending")
            #expect(try await Self.create(client, token: adminKey).errorCode == "invalid_request")
            #expect(try await Self.create(client, token: adminKey, extra: ["userId": "nobody"]).errorCode == "user_not_found")
            // A session cannot make one for somebody else.
            let stranger = try await Flow(client: client).signUp("stranger@example.com")
            #expect(try await Self.create(client, token: stranger.token, extra: ["userId": owner.account.userId]).errorCode == "invalid_request")
            // The backend declines and reads the evidence too.
            let payload = try #require(created.value("payload"))
            #expect(try await Self.approve(client, id, registrationId: owner.registrationId, signature: Self.sign(owner.device, payload)).status == .ok)
            #expect(try await client.request(.get, "/v1/confirmations/\(id)/evidence", token: adminKey).status == .ok)
        }
    }

    @Test func concurrentApprovalsGiveExactlyOneSuccess() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let owner = try await Self.owner(client, "race@example.com")
            let (id, payload) = try await Self.pending(client, owner)
            let signature = Self.sign(owner.device, payload)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask { Int(try await Self.approve(client, id, registrationId: owner.registrationId, signature: signature).status.code) }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 409 }.count == 7)
        }
    }

    @Test func aPasskeyApprovesOverTheHashOfThePayload() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let owner = try await Self.owner(client, "passkey-confirm@example.com")
            let browser = PasskeyTests.Browser(client: client)
            var (credential, registered) = try await browser.register(owner.account.token)
            try #require(registered.status == .created)
            let (id, payload) = try await Self.pending(client, owner)

            let options = try await client.request(.post, "/v1/confirmations/\(id)/passkey-options", token: owner.account.token)
            #expect(options.status == .ok)
            #expect(options.value("challenge") == Base64.urlEncode(Array(SHA256.hash(data: Array(payload.utf8)))))
            #expect((options.json["allowCredentials"] as? [[String: Any]])?.first?["id"] as? String == Base64.urlEncode(credential.id))

            // Another user's passkey is refused.
            let stranger = try await Self.owner(client, "passkey-stranger@example.com")
            var strangerBrowser = PasskeyTests.Browser(client: client)
            strangerBrowser.authenticator = browser.authenticator
            var (strangerCredential, _) = try await strangerBrowser.register(stranger.account.token)
            // (A browser would not offer it; a forged request can still send it.)
            var openOptions = options.json
            openOptions["allowCredentials"] = [[String: Any]]()
            let foreign = try browser.authenticator.respond(
                toRequestOptions: Array(try JSONSerialization.data(withJSONObject: openOptions)),
                credential: &strangerCredential,
                origin: PasskeyTests.origin
            )
            let refused = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: String(decoding: foreign, as: UTF8.self))
            #expect(refused.status == .forbidden && refused.errorCode == "registration_not_allowed")

            let assertion = try browser.authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: PasskeyTests.origin)
            let approved = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: String(decoding: assertion, as: UTF8.self))
            #expect(approved.status == .ok, "\(String(decoding: approved.body, as: UTF8.self))")
            #expect(approved.value("confirmation", "method") == "passkey")
            #expect(approved.value("receipt") != nil)
            let evidenceAnswer = try await client.request(.get, "/v1/confirmations/\(id)/evidence", token: owner.account.token)
            let evidence = try #require(try JSONDecoder().decode([String: ConfirmationEvidence].self, from: evidenceAnswer.body)["evidence"])
            #expect(evidence.method == "passkey" && evidence.authenticatorData != nil)
            #expect(try evidence.verify().userVerified != nil)
            // Replaying the assertion: the confirmation is decided.
            let replay = try await client.request(.post, "/v1/confirmations/\(id)/passkey-verify", raw: String(decoding: assertion, as: UTF8.self))
            #expect(replay.errorCode == "confirmation_not_pending")
        }
    }
}

/// Any JSON value, to look at a token's raw claims.
enum AnyCodableValue: Decodable, Equatable {
    case string(String)
    case number(Double)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .other
        }
    }
}
