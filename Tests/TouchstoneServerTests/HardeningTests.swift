import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import HummingbirdBcrypt
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// Issue #12's findings, each through the HTTP API: the rows H29–H44 of the hostile-input table in docs/security.md.
struct HardeningTests {
    typealias Hostile = HostileInputTests

    // MARK: Keys

    @Test("H29 Ed25519 device keys that are not full-order points (raw)", arguments: Ed25519Vectors.allInvalid)
    func ed25519RawDeviceKeysOfSmallOrderAreRefused(_ vector: Ed25519Vectors.Case) async throws {
        try await Hostile.run { client in
            let response = try await Hostile.startWithKey(client, Base64.urlEncode(vector.bytes), algorithm: "EdDSA")
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_public_key")
        }
    }

    @Test("H30 Ed25519 device keys that are not full-order points (SPKI)", arguments: Ed25519Vectors.allInvalid)
    func ed25519SPKIDeviceKeysOfSmallOrderAreRefused(_ vector: Ed25519Vectors.Case) async throws {
        try await Hostile.run { client in
            let response = try await Hostile.startWithKey(client, Base64.urlEncode(vector.spkiDER), algorithm: "EdDSA")
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_public_key")
        }
    }

    @Test("H31 a passkey whose COSE OKP key is a small-order point", arguments: Ed25519Vectors.smallOrder + [Ed25519Vectors.mixedOrder])
    func passkeysWithSmallOrderEdDSAKeysAreRefused(_ vector: Ed25519Vectors.Case) async throws {
        try await Hostile.run { client in
            let cose = CBOREncoder.encode(.map([.int(1): .int(1), .int(3): .int(-8), .int(-1): .int(6), .int(-2): .bytes(vector.bytes)]))
            let response = try await Hostile.registerPasskey(client, cose: cose)
            #expect(response.errorCode == "invalid_passkey_registration")
            #expect(Hostile.message(response).hasPrefix("unsupported_key: invalid EdDSA public key"))
        }
    }

    @Test("H32 an RSA device key with an even modulus") func rsaKeysWithAnEvenModulusAreRefused() async throws {
        try await Hostile.run { client in
            var der = Hostile.pkcs1(bits: 2048, exponent: [1, 0, 1])
            // The modulus's last byte sits just before the exponent's INTEGER (02 03 01 00 01).
            der[der.count - 6] &= 0xFE
            let response = try await Hostile.startWithKey(client, Base64.urlEncode(der), algorithm: "RS256")
            #expect(response.errorCode == "invalid_public_key")
            #expect(Hostile.message(response).contains("odd"))
        }
    }

    // MARK: Passwords and PINs

    @Test("H33 a password followed by NUL and more does not sign in") func aPasswordWithANulSuffixIsRefused() async throws {
        try await Hostile.run { client in
            let account = try await Flow(client: client).signUp()
            let response = try await client.request(
                .post,
                "/v1/sessions",
                json: ["email": account.email, "password": Flow.password + "\u{0}anything"]
            )
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
            #expect(Hostile.message(response).contains("'password' must not contain control characters"))
            // And no new password may contain one either.
            let signUp = try await client.request(.post, "/v1/users", json: ["email": "nul@example.com", "password": "secret\u{0}secret"])
            #expect(signUp.errorCode == "invalid_request")
        }
    }

    @Test("H34 two passwords that share their first 72 bytes are two passwords") func longPasswordsDoNotCollide() async throws {
        try await Hostile.run { client in
            let prefix = String(repeating: "ab", count: 40)  // 80 bytes: past what bcrypt reads
            let signUp = try await client.request(.post, "/v1/users", json: ["email": "long@example.com", "password": prefix + "1"])
            #expect(signUp.status == .created)
            let other = try await client.request(.post, "/v1/sessions", json: ["email": "long@example.com", "password": prefix + "2"])
            #expect(other.errorCode == "invalid_credentials")
            let same = try await client.request(.post, "/v1/sessions", json: ["email": "long@example.com", "password": prefix + "1"])
            #expect(same.status == .ok)
            let tooLong = try await client.request(
                .post,
                "/v1/users",
                json: ["email": "longer@example.com", "password": String(repeating: "x", count: 1025)]
            )
            #expect(tooLong.errorCode == "invalid_request")
            #expect(Hostile.message(tooLong) == "field 'password' is longer than 1024 characters")
            // Counted in characters, as the OpenAPI document's maxLength counts: 1,024 four-byte characters fit.
            let wide = try await client.request(
                .post,
                "/v1/users",
                json: ["email": "wide@example.com", "password": String(repeating: "\u{1F600}", count: 1024)]
            )
            #expect(wide.status == .created)
        }
    }

    @Test func passwordsAreComparedAfterNFCNormalisation() async throws {
        try await Hostile.run { client in
            let decomposed = "cafe\u{301} au lait"  // é as e + combining acute
            let signUp = try await client.request(.post, "/v1/users", json: ["email": "nfc@example.com", "password": decomposed])
            #expect(signUp.status == .created)
            let composed = try await client.request(.post, "/v1/sessions", json: ["email": "nfc@example.com", "password": "caf\u{e9} au lait"])
            #expect(composed.status == .ok)
        }
    }

    @Test func passwordChangeAndPinsFollowTheSameRules() async throws {
        try await Hostile.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let change = try await client.request(
                .put,
                "/v1/session/password",
                token: account.token,
                json: ["newPassword": "new password\u{7}"]
            )
            #expect(change.errorCode == "invalid_request")
            #expect(Hostile.message(change).contains("'newPassword' must not contain control characters"))
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            let pin = try await flow.setPin(account.token, id, "1234\u{0}")
            #expect(pin.errorCode == "invalid_request")
            #expect(Hostile.message(pin) == "field 'pin' must be 4 to 8 digits")
            #expect(try await flow.setPin(account.token, id, "1234").status == .ok)
            #expect(try await flow.pinLogin(id, "1234\u{0}99").errorCode == "invalid_request")
            #expect(try await flow.pinLogin(id, "1234").status == .ok)
        }
    }

    @Test func hashesFromBeforeThePrehashVerifyOnlyWholeInputsAndAreUpgraded() async throws {
        let configuration = TestServer.configuration()
        guard case .sqliteFile(let path) = configuration.database else { return }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await store.migrate()
        // A hash of the old scheme: bcrypt of the password as sent (72 bytes: all that bcrypt reads).
        let password = String(repeating: "p", count: 72)
        try await store.insertUser(
            UserRecord(id: "legacy", email: "legacy@example.com", displayName: nil, passwordHash: Bcrypt.hash(password, cost: 4), createdAt: Date())
        )
        try await TestServer.run(configuration: configuration, store: store) { client in
            // bcrypt alone would accept this (it ignores byte 73 on); the server does not.
            let longer = try await client.request(.post, "/v1/sessions", json: ["email": "legacy@example.com", "password": password + "x"])
            #expect(longer.errorCode == "invalid_credentials")
            let right = try await client.request(.post, "/v1/sessions", json: ["email": "legacy@example.com", "password": password])
            #expect(right.status == .ok)
            let upgraded = try #require(try await store.user(id: "legacy"))
            #expect(upgraded.passwordHash?.hasPrefix("$tsh1$") == true)
            let again = try await client.request(.post, "/v1/sessions", json: ["email": "legacy@example.com", "password": password])
            #expect(again.status == .ok)
        }
    }

    // MARK: Emails and names

    @Test("H35 malformed email addresses at sign-up", arguments: [
        "ana@example.com\u{0}", "ana\u{0}@example.com", " ana@example.com", "ana@example.com ", "ana @example.com",
        "ana@example.com\n", "ana\t@example.com", "ana@@example.com", "ana@example", "@example.com", "ana@.example.com",
        "ana@example..com", "ana..b@example.com", "ana@-example.com", "\"ana\"@example.com", "ana@exam_ple.com",
        "ana\u{202E}@example.com", "ana\u{200B}@example.com", "ana@example.com\u{85}",
    ])
    func malformedEmailsAreRefused(_ email: String) async throws {
        try await Hostile.run { client in
            let response = try await client.request(.post, "/v1/users", json: ["email": email, "password": Flow.password])
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
            #expect(Hostile.message(response).contains("'email'"))
            let signIn = try await client.request(.post, "/v1/sessions", json: ["email": email, "password": Flow.password])
            #expect(signIn.errorCode == "invalid_request")
        }
    }

    @Test func oneAddressCannotHoldTwoAccounts() async throws {
        try await Hostile.run { client in
            let first = try await client.request(.post, "/v1/users", json: ["email": "Jos\u{e9}@Example.COM", "password": Flow.password])
            #expect(first.value("user", "email") == "jos\u{e9}@example.com")
            for variant in ["jos\u{e9}@example.com", "JOSE\u{301}@example.com", "jose\u{301}@EXAMPLE.com"] {
                let again = try await client.request(.post, "/v1/users", json: ["email": variant, "password": Flow.password])
                #expect(again.errorCode == "email_taken", "\(variant)")
            }
            let signIn = try await client.request(.post, "/v1/sessions", json: ["email": "JOSE\u{301}@example.com", "password": Flow.password])
            #expect(signIn.status == .ok)
        }
    }

    @Test("H36 control characters and bidi overrides in names", arguments: [
        ("displayName", "Ana\u{0}"), ("displayName", "Ana\u{1B}[31m"), ("displayName", "\u{202E}anA"), ("displayName", "Ana\u{2028}B"),
        ("displayName", " Ana"), ("displayName", "   "), ("deviceName", "Phone\nSecond line"), ("deviceName", "\u{2066}Phone"),
    ])
    func namesWithControlCharactersAreRefused(field: String, value: String) async throws {
        try await Hostile.run { client in
            let response: JSONTestResponse
            if field == "displayName" {
                response = try await client.request(
                    .post,
                    "/v1/users",
                    json: ["email": "names@example.com", "password": Flow.password, "displayName": value]
                )
            } else {
                let account = try await Flow(client: client).signUp()
                response = try await client.request(
                    .post,
                    "/v1/biometrics/registrations/start",
                    token: account.token,
                    json: ["publicKey": TestDeviceKey(.es256).publicKey(), "algorithm": "ES256", "deviceId": "d1", "deviceName": value]
                )
            }
            #expect(response.errorCode == "invalid_request")
            #expect(Hostile.message(response).contains("'\(field)'"))
        }
    }

    // MARK: JSON

    @Test("H37 a number of the wrong kind names its field", arguments: ["1.5", "30.25", "\"30\"", "true", "-9223372036854775809", "[1]"])
    func numbersOfTheWrongKindNameTheField(_ value: String) async throws {
        try await Hostile.run { client in
            let (registrationId, _, _) = try await Hostile.enrolledWithChallenge(client)
            let response = try await client.request(
                .post,
                "/v1/pin/authentications",
                raw: "{\"registrationId\": \"\(registrationId)\", \"pin\": \"1234\", \"sessionDurationMinutes\": \(value)}"
            )
            #expect(response.status == .badRequest)
            #expect(Hostile.message(response).contains("'sessionDurationMinutes'"), "\(Hostile.message(response))")
        }
    }
}

/// Failed password and PIN checks per client address (issue #12, item 4): through the API, with forwarded addresses
/// from a trusted proxy standing for many clients.
struct FailedCredentialsPerAddressTests {
    static func configuration(limit: Int = 3) -> TouchstoneConfiguration {
        TestServer.configuration {
            $0.rateLimits.enabled = true
            $0.rateLimits.perAccount = RateLimit(capacity: 1000, interval: 1)
            $0.rateLimits.failedCredentialsPerAddress = FailureLimit(count: limit, window: 600)
            $0.rateLimits.trustedProxies = ["127.0.0.1"]
        }
    }

    static func signIn(_ client: any TestClientProtocol, _ email: String, _ password: String, from address: String) async throws
        -> JSONTestResponse
    {
        try await client.request(
            .post,
            "/v1/sessions",
            json: ["email": email, "password": password],
            headers: [HTTPField.Name("X-Forwarded-For")!: address]
        )
    }

    /// Runs live (so the peer is 127.0.0.1, the trusted proxy) with an admin key.
    static func withAdmin(
        clock: ManualClock = ManualClock(),
        _ body: @Sendable (any TestClientProtocol, String, any TouchstoneStore) async throws -> Void
    ) async throws {
        try await TestServer.runWithAdminKey(.live, configuration: Self.configuration(), clock: clock, body)
    }

    @Test("H38 wrong passwords for many emails from one address are blocked") func manyEmailsFromOneAddressAreBlocked() async throws {
        let clock = ManualClock()
        try await Self.withAdmin(clock: clock) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            for index in 0..<3 {
                let response = try await Self.signIn(client, "victim\(index)@example.com", "guess", from: "203.0.113.9")
                #expect(response.errorCode == "invalid_credentials")
            }
            // Blocked now, even with the right password of a real account.
            let blocked = try await Self.signIn(client, account.email, Flow.password, from: "203.0.113.9")
            #expect(blocked.status == .tooManyRequests)
            #expect(blocked.errorCode == "rate_limited")
            #expect(blocked.headers[.retryAfter] == "600")
            // Another address is not.
            #expect(try await Self.signIn(client, account.email, Flow.password, from: "203.0.113.10").status == .ok)

            // The operator sees it, and the trail has it.
            let list = try await client.request(.get, "/v1/admin/blocked-addresses", token: key)
            let addresses = try #require(list.json["addresses"] as? [[String: Any]])
            #expect(addresses.map { $0["address"] as? String } == ["203.0.113.9"])
            #expect(addresses.first?["failures"] as? Int == 3)
            let events = try await client.request(.get, "/v1/admin/events?type=address.blocked", token: key)
            let blockedEvents = try #require(events.json["events"] as? [[String: Any]])
            #expect(blockedEvents.count == 1)
            #expect(blockedEvents.first?["clientAddress"] as? String == "203.0.113.9")

            // The block ends with its window.
            clock.advance(by: 601)
            #expect(try await Self.signIn(client, account.email, Flow.password, from: "203.0.113.9").status == .ok)
        }
    }

    @Test func successfulSignInsNeitherCountNorReset() async throws {
        try await Self.withAdmin { client, _, _ in
            let account = try await Flow(client: client).signUp()
            // An office behind one address: many good sign-ins, a few typos.
            for _ in 0..<10 {
                #expect(try await Self.signIn(client, account.email, Flow.password, from: "198.51.100.1").status == .ok)
            }
            for _ in 0..<2 {
                #expect(try await Self.signIn(client, account.email, "typo", from: "198.51.100.1").errorCode == "invalid_credentials")
            }
            #expect(try await Self.signIn(client, account.email, Flow.password, from: "198.51.100.1").status == .ok)
            // The success did not reset the count: one more failure reaches the limit.
            #expect(try await Self.signIn(client, account.email, "typo", from: "198.51.100.1").errorCode == "invalid_credentials")
            #expect(try await Self.signIn(client, account.email, Flow.password, from: "198.51.100.1").errorCode == "rate_limited")
        }
    }

    @Test func wrongPinsCountToo() async throws {
        try await Self.withAdmin { client, _, _ in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            #expect(try await flow.setPin(account.token, id, "2468").status == .ok)
            func pin(_ value: String) async throws -> JSONTestResponse {
                try await client.request(
                    .post,
                    "/v1/pin/authentications",
                    json: ["registrationId": id, "pin": value],
                    headers: [HTTPField.Name("X-Forwarded-For")!: "192.0.2.44"]
                )
            }
            #expect(try await pin("0000").errorCode == "invalid_pin")
            #expect(try await pin("1111").errorCode == "invalid_pin")
            #expect(try await Self.signIn(client, "x@example.com", "guess", from: "192.0.2.44").errorCode == "invalid_credentials")
            #expect(try await pin("2468").errorCode == "rate_limited")
        }
    }

    @Test func anOperatorUnblocksAnAddress() async throws {
        try await Self.withAdmin { client, key, _ in
            let account = try await Flow(client: client).signUp()
            for _ in 0..<3 { _ = try await Self.signIn(client, "nobody@example.com", "guess", from: "2001:db8::7") }
            #expect(try await Self.signIn(client, account.email, Flow.password, from: "2001:db8::7").errorCode == "rate_limited")
            let unblock = try await client.request(.delete, "/v1/admin/blocked-addresses/2001:db8::7", token: key)
            #expect(unblock.status == .noContent)
            #expect(try await Self.signIn(client, account.email, Flow.password, from: "2001:db8::7").status == .ok)
            let again = try await client.request(.delete, "/v1/admin/blocked-addresses/2001:db8::7", token: key)
            #expect(again.status == .notFound)
            #expect(again.errorCode == "address_not_blocked")
            let events = try await client.request(.get, "/v1/admin/events?type=address.unblocked", token: key)
            let reasons = (events.json["events"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
            #expect(reasons == ["2001:db8::7 by admin:ops"])
            // A user's token is not enough.
            let user = try await client.request(.get, "/v1/admin/blocked-addresses", token: account.token)
            #expect(user.errorCode == "admin_key_required")
        }
    }

    @Test func theLimitParses() throws {
        #expect(FailureLimit("50/15m") == FailureLimit(count: 50, window: 900))
        #expect(FailureLimit("100/hour") == FailureLimit(count: 100, window: 3600))
        #expect(FailureLimit("20/600s") == FailureLimit(count: 20, window: 600))
        #expect(FailureLimit("0/1m") == nil && FailureLimit("5") == nil && FailureLimit("5/fortnight") == nil)
        let configuration = try TouchstoneConfiguration(environment: ["TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS": "7/2h"])
        #expect(configuration.rateLimits.failedCredentialsPerAddress == FailureLimit(count: 7, window: 7200))
        #expect(throws: (any Error).self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS": "lots"]) }
    }
}

/// Issue #12, item 8, through the HTTP API: with `TOUCHSTONE_TRUST_ANCHORS` configured, a `packed` attestation whose
/// chain reaches none of them, or whose certificate is outside its validity, fails the registration.
struct TrustAnchorRegistrationTests {
    /// Runs a server that trusts `root` only and requires `minimum` attestation.
    static func withServer(
        trusting root: TestAttestationCA,
        minimum: AttestationType = .basic,
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let anchors = TemporaryFiles.path("anchors", suffix: ".pem")
        defer { TemporaryFiles.remove(anchors) }
        try root.pem.write(toFile: anchors, atomically: true, encoding: .utf8)
        let configuration = PasskeyTests.configuration {
            $0.passkeys.trustAnchorFiles = [anchors]
            $0.passkeys.minimumAttestation = minimum
        }
        try await TestServer.run(configuration: configuration, body)
    }

    /// Registers a passkey whose packed attestation certificate `issuer` made with `validity`.
    static func register(
        _ client: any TestClientProtocol,
        issuer: TestAttestationCA,
        validity: ClosedRange<Date> = TestAttestationCA.aroundTestTime
    ) async throws -> JSONTestResponse {
        let account = try await Flow(client: client).signUp()
        let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
        let (_, none) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
        let packed = try issuer.packedResponse(from: none, validity: validity)
        return try await client.request(
            .post,
            "/v1/passkeys/registrations/verify",
            token: account.token,
            raw: String(decoding: packed, as: UTF8.self)
        )
    }

    @Test func aChainToTheConfiguredRootRegisters() async throws {
        let root = try TestAttestationCA()
        try await Self.withServer(trusting: root) { client in
            let response = try await Self.register(client, issuer: root)
            #expect(response.status == .created, "\(String(decoding: response.body, as: UTF8.self))")
        }
    }

    /// Even when the minimum would let an untrusted attestation through: configured anchors are a requirement.
    @Test(arguments: [AttestationType.basic, .none])
    func aChainThatReachesNoConfiguredRootFails(minimum: AttestationType) async throws {
        try await Self.withServer(trusting: try TestAttestationCA(), minimum: minimum) { client in
            let response = try await Self.register(client, issuer: try TestAttestationCA())
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_passkey_registration")
            #expect(HardeningTests.Hostile.message(response).hasPrefix("untrusted_attestation: "))
        }
    }

    @Test func aCertificateOutsideItsValidityFails() async throws {
        let root = try TestAttestationCA()
        try await Self.withServer(trusting: root) { client in
            // Expired a day before the server's clock (2027-01-15).
            let expired = Date(timeIntervalSince1970: 1_800_000_000 - 30 * 86_400)...Date(timeIntervalSince1970: 1_800_000_000 - 86_400)
            let response = try await Self.register(client, issuer: root, validity: expired)
            #expect(response.errorCode == "invalid_passkey_registration")
            #expect(HardeningTests.Hostile.message(response).contains("is not valid at"))
        }
    }
}
