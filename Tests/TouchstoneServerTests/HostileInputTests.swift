import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// Every row of the hostile-input table in docs/security.md, through the HTTP API: the answer each bad input gets.
/// The row ids (H01...) are the table's.
struct HostileInputTests {
    // MARK: Helpers

    /// An account with a recent password session.
    static func account(_ client: any TestClientProtocol) async throws -> Flow.Account { try await Flow(client: client).signUp() }

    /// `registrations/start` with this public key (as sent) and algorithm.
    static func startWithKey(_ client: any TestClientProtocol, _ publicKey: String, algorithm: String = "ES256") async throws
        -> JSONTestResponse
    {
        let account = try await Self.account(client)
        return try await client.request(
            .post,
            "/v1/biometrics/registrations/start",
            token: account.token,
            json: ["publicKey": publicKey, "algorithm": algorithm, "deviceId": UUID().uuidString]
        )
    }

    /// An enrolled ES256 device and a fresh sign-in challenge for it.
    static func enrolledWithChallenge(_ client: any TestClientProtocol) async throws -> (String, TestDeviceKey, String) {
        let flow = Flow(client: client)
        let account = try await flow.signUp()
        let device = TestDeviceKey(.es256)
        let id = try await flow.enroll(account.token, device)
        return (id, device, try await flow.challenge(id))
    }

    static func finish(_ client: any TestClientProtocol, _ id: String, _ challenge: String, signature: [UInt8]) async throws
        -> JSONTestResponse
    {
        try await Flow(client: client).finishLogin(id, challenge: challenge, signature: Base64.urlEncode(signature))
    }

    /// A genuine passkey registration response for a new account, as a JSON object to tamper with.
    static func passkeyRegistration(_ client: any TestClientProtocol) async throws -> (token: String, response: [String: Any]) {
        let account = try await Self.account(client)
        let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
        let (_, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
        return (account.token, try #require(try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any]))
    }

    /// Registers a passkey whose well-formed "none" attestation carries `cose` as the credential public key.
    static func registerPasskey(_ client: any TestClientProtocol, cose: [UInt8]) async throws -> JSONTestResponse {
        let credentialId = [UInt8](repeating: 7, count: 16)
        var authData = Array(SHA256.hash(data: Array("app.example".utf8)))
        authData += [0x45, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0, 16] + credentialId + cose
        let attestation = CBOREncoder.encode(
            .map([.text("fmt"): .text("none"), .text("attStmt"): .map([:]), .text("authData"): .bytes(authData)])
        )
        var (token, object) = try await Self.passkeyRegistration(client)
        var inner = try #require(object["response"] as? [String: Any])
        inner["attestationObject"] = Base64.urlEncode(attestation)
        object["response"] = inner
        object["id"] = Base64.urlEncode(credentialId)
        object["rawId"] = Base64.urlEncode(credentialId)
        return try await client.request(
            .post,
            "/v1/passkeys/registrations/verify",
            token: token,
            raw: String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        )
    }

    /// Posts a registration response with `response.<field>` replaced by `bytes` (base64url).
    static func verifyRegistration(
        _ client: any TestClientProtocol,
        replacing field: String,
        with bytes: [UInt8]
    ) async throws -> JSONTestResponse {
        var (token, object) = try await Self.passkeyRegistration(client)
        var inner = try #require(object["response"] as? [String: Any])
        inner[field] = Base64.urlEncode(bytes)
        object["response"] = inner
        let body = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        return try await client.request(.post, "/v1/passkeys/registrations/verify", token: token, raw: body)
    }

    static func message(_ response: JSONTestResponse) -> String {
        (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    static func run(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await TestServer.run(configuration: PasskeyTests.configuration(), body)
    }

    // MARK: Request bodies

    @Test("H01 malformed JSON") func malformedJSON() async throws {
        try await Self.run { client in
            let response = try await client.request(.post, "/v1/sessions", raw: "{\"email\": ")
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
        }
    }

    @Test("H02 JSON of the wrong shape (an array)") func wrongShape() async throws {
        try await Self.run { client in
            let response = try await client.request(.post, "/v1/sessions", raw: "[\"a@example.com\", \"password\"]")
            #expect(response.errorCode == "invalid_request")
            #expect(Self.message(response) == "request body must be a JSON object")
        }
    }

    @Test("H03 a field of the wrong type is named") func wrongType() async throws {
        try await Self.run { client in
            let response = try await client.request(.post, "/v1/sessions", raw: "{\"email\": 42, \"password\": \"x\"}")
            #expect(response.errorCode == "invalid_request")
            #expect(Self.message(response) == "field 'email' has the wrong type")
        }
    }

    @Test("H04 JSON nested 10,000 deep") func deepJSON() async throws {
        try await Self.run { client in
            let nested = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
            let response = try await client.request(.post, "/v1/sessions", raw: "{\"email\": \(nested), \"password\": \"x\"}")
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
        }
    }

    @Test("H05 a huge string within the body limit is named") func hugeString() async throws {
        try await Self.run { client in
            let response = try await client.request(
                .post,
                "/v1/sessions",
                json: ["email": String(repeating: "a", count: 60_000), "password": "x"]
            )
            #expect(response.errorCode == "invalid_request")
            #expect(Self.message(response) == "field 'email' is longer than 254 characters")
        }
    }

    @Test("H06 a body over the limit (1 MB public key)") func oversizedBody() async throws {
        try await Self.run { client in
            let account = try await Self.account(client)
            let response = try await client.request(
                .post,
                "/v1/biometrics/registrations/start",
                token: account.token,
                json: ["publicKey": String(repeating: "A", count: 1_000_000), "algorithm": "ES256", "deviceId": "d"]
            )
            #expect(response.status == .contentTooLarge)
            #expect(response.errorCode == "payload_too_large")
        }
    }

    @Test("H07 empty values") func emptyValues() async throws {
        try await Self.run { client in
            let account = try await Self.account(client)
            let response = try await client.request(
                .post,
                "/v1/biometrics/registrations/start",
                token: account.token,
                json: ["publicKey": "", "algorithm": "ES256", "deviceId": "d"]
            )
            #expect(response.errorCode == "invalid_request")
            #expect(Self.message(response) == "field 'publicKey' must not be empty")
            let signature = try await client.request(
                .post,
                "/v1/biometrics/authentications/finish",
                json: ["registrationId": "r", "challenge": "c", "signature": ""]
            )
            #expect(Self.message(signature) == "field 'signature' must not be empty")
        }
    }

    // MARK: Device keys

    @Test("H08 invalid base64") func invalidBase64() async throws {
        try await Self.run { client in
            let key = try await Self.startWithKey(client, "not base64 !!!")
            #expect(key.status == .badRequest)
            #expect(key.errorCode == "invalid_public_key")
            let signature = try await client.request(
                .post,
                "/v1/biometrics/authentications/finish",
                json: ["registrationId": "r", "challenge": "c", "signature": "***"]
            )
            #expect(signature.errorCode == "invalid_request")
            #expect(Self.message(signature) == "field 'signature' is not base64 or base64url")
        }
    }

    @Test("H09 a public key longer than any real one") func overlongKey() async throws {
        try await Self.run { client in
            let response = try await Self.startWithKey(client, Base64.urlEncode([UInt8](repeating: 4, count: 20_000)))
            #expect(response.errorCode == "invalid_request")
            #expect(Self.message(response).hasPrefix("field 'publicKey' is longer than"))
        }
    }

    @Test("H10 a P-256 point not on the curve") func pointNotOnCurve() async throws {
        try await Self.run { client in
            let response = try await Self.startWithKey(client, Base64.urlEncode([0x04] + [UInt8](repeating: 1, count: 64)))
            #expect(response.errorCode == "invalid_public_key")
        }
    }

    @Test("H11 the P-256 identity point (point at infinity)") func identityPoint() async throws {
        try await Self.run { client in
            let infinity = try await Self.startWithKey(client, Base64.urlEncode([0x00]))
            #expect(infinity.errorCode == "invalid_public_key")
            // And as a zero point in uncompressed form.
            let zero = try await Self.startWithKey(client, Base64.urlEncode([0x04] + [UInt8](repeating: 0, count: 64)))
            #expect(zero.errorCode == "invalid_public_key")
        }
    }

    @Test("H12 SPKI DER with trailing bytes") func trailingBytes() async throws {
        try await Self.run { client in
            let spki = TestDeviceKey(.es256).publicKeyBytes(.spkiDER)
            let response = try await Self.startWithKey(client, Base64.urlEncode(spki + [0x00]))
            #expect(response.errorCode == "invalid_public_key")
        }
    }

    /// PKCS#1 RSAPublicKey DER for a modulus of `bits` bits and exponent `e`.
    static func pkcs1(bits: Int, exponent: [UInt8]) -> [UInt8] {
        func length(_ count: Int) -> [UInt8] {
            count < 128 ? [UInt8(count)] : (count < 256 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)])
        }
        var modulus = [UInt8](repeating: 0, count: bits / 8)
        for index in modulus.indices { modulus[index] = UInt8.random(in: 0...255) }
        modulus[0] |= 0x80
        modulus[modulus.count - 1] |= 1
        let n: [UInt8] = [0x02] + length(modulus.count + 1) + [0x00] + modulus
        let e: [UInt8] = [0x02] + length(exponent.count) + exponent
        return [0x30] + length(n.count + e.count) + n + e
    }

    @Test("H13 RSA with a tiny public exponent (3)") func rsaTinyExponent() async throws {
        try await Self.run { client in
            let response = try await Self.startWithKey(client, Base64.urlEncode(Self.pkcs1(bits: 2048, exponent: [3])), algorithm: "RS256")
            #expect(response.errorCode == "invalid_public_key")
            #expect(Self.message(response).contains("exponent"))
        }
    }

    @Test("H14 RSA with a 1024-bit modulus") func rsa1024() async throws {
        try await Self.run { client in
            let key = Self.pkcs1(bits: 1024, exponent: [0x01, 0x00, 0x01])
            let response = try await Self.startWithKey(client, Base64.urlEncode(key), algorithm: "RS256")
            #expect(response.errorCode == "invalid_public_key")
            #expect(Self.message(response).contains("1024 bits"))
        }
    }

    @Test("H15 a zero-length signature") func zeroLengthSignature() async throws {
        try await Self.run { client in
            let (id, _, challenge) = try await Self.enrolledWithChallenge(client)
            // Base64 of nothing is the empty string: refused as a request before any verification.
            let response = try await Self.finish(client, id, challenge, signature: [])
            #expect(response.errorCode == "invalid_request")
        }
    }

    @Test("H16 an overlong signature") func overlongSignature() async throws {
        try await Self.run { client in
            let (id, _, challenge) = try await Self.enrolledWithChallenge(client)
            let response = try await Self.finish(client, id, challenge, signature: [UInt8](repeating: 0x30, count: 1500))
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "invalid_signature")
        }
    }

    @Test("H17 a DER signature with trailing bytes") func signatureTrailingBytes() async throws {
        try await Self.run { client in
            let (id, device, challenge) = try await Self.enrolledWithChallenge(client)
            let signature = device.signature(over: challenge) + [0x00]
            let response = try await Self.finish(client, id, challenge, signature: signature)
            #expect(response.errorCode == "invalid_signature")
        }
    }

    @Test("H18 a challenge from another ceremony") func challengeFromAnotherCeremony() async throws {
        try await Self.run { client in
            let (idA, deviceA, _) = try await Self.enrolledWithChallenge(client)
            let (idB, _, challengeB) = try await Self.enrolledWithChallenge(client)
            _ = idB
            // B's challenge, signed correctly by A's key, answered for A.
            let response = try await Self.finish(client, idA, challengeB, signature: deviceA.signature(over: challengeB))
            #expect(response.errorCode == "challenge_not_found")
            // A passkey registration challenge used to sign in with a passkey.
            let account = try await Self.account(client)
            let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            var (credential, _) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
            let registrationChallenge = try #require(options.value("challenge"))
            let requestOptions: [String: Any] = ["challenge": registrationChallenge, "rpId": "app.example", "allowCredentials": []]
            let assertion = try VirtualAuthenticator().respond(
                toRequestOptions: Array(try JSONSerialization.data(withJSONObject: requestOptions)),
                credential: &credential,
                origin: PasskeyTests.origin
            )
            let verify = try await client.request(.post, "/v1/passkeys/authentications/verify", raw: String(decoding: assertion, as: UTF8.self))
            #expect(verify.errorCode == "challenge_not_found")
        }
    }

    // MARK: WebAuthn client data

    @Test("H19 clientDataJSON that is not JSON") func clientDataNotJSON() async throws {
        try await Self.run { client in
            let response = try await Self.verifyRegistration(client, replacing: "clientDataJSON", with: Array("not json".utf8))
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_passkey_registration")
        }
    }

    @Test("H20 clientDataJSON of the wrong type") func clientDataWrongType() async throws {
        try await Self.run { client in
            var (token, object) = try await Self.passkeyRegistration(client)
            var inner = try #require(object["response"] as? [String: Any])
            let original = try #require((inner["clientDataJSON"] as? String).flatMap { Base64.decode($0) })
            let text = String(decoding: original, as: UTF8.self).replacingOccurrences(of: "webauthn.create", with: "webauthn.get")
            inner["clientDataJSON"] = Base64.urlEncode(Array(text.utf8))
            object["response"] = inner
            let response = try await client.request(
                .post,
                "/v1/passkeys/registrations/verify",
                token: token,
                raw: String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            )
            #expect(response.errorCode == "invalid_passkey_registration")
            #expect(Self.message(response).hasPrefix("wrong_type"))
        }
    }

    @Test("H21 clientDataJSON from the wrong origin") func clientDataWrongOrigin() async throws {
        try await Self.run { client in
            let account = try await Self.account(client)
            let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            let (_, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: "https://app.example.evil")
            let verify = try await client.request(
                .post, "/v1/passkeys/registrations/verify", token: account.token, raw: String(decoding: response, as: UTF8.self))
            #expect(verify.errorCode == "invalid_passkey_registration")
            #expect(Self.message(verify).hasPrefix("origin_not_allowed"))
        }
    }

    // MARK: CBOR and COSE

    /// Answers of attestation objects that are not valid CBOR: all 400 `invalid_passkey_registration` (`malformed`).
    static func expectMalformedAttestation(_ bytes: [UInt8]) async throws {
        try await Self.run { client in
            let response = try await Self.verifyRegistration(client, replacing: "attestationObject", with: bytes)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_passkey_registration")
            #expect(Self.message(response).hasPrefix("malformed"), "\(Self.message(response))")
        }
    }

    @Test("H22 CBOR with indefinite lengths") func cborIndefinite() async throws {
        try await Self.expectMalformedAttestation([0xBF, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0xFF])
    }

    @Test("H23 CBOR nested 10,000 deep") func cborDeep() async throws {
        try await Self.expectMalformedAttestation([UInt8](repeating: 0x81, count: 10_000) + [0x00])
    }

    @Test("H24 CBOR lengths past the end") func cborPastTheEnd() async throws {
        try await Self.expectMalformedAttestation([0xA1, 0x68] + Array("authData".utf8) + [0x58, 0x40, 1, 2, 3])
    }

    @Test("H25 CBOR with a 2^64 - 1 length") func cborHugeLength() async throws {
        try await Self.expectMalformedAttestation([0xA1, 0x68] + Array("authData".utf8) + [0x5B] + [UInt8](repeating: 0xFF, count: 8))
    }

    @Test("H26 CBOR with duplicate map keys") func cborDuplicateKeys() async throws {
        let entry: [UInt8] = [0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8)
        try await Self.expectMalformedAttestation([0xA2] + entry + entry)
    }

    @Test("H27 a COSE key whose point is not on the curve") func coseNotOnCurve() async throws {
        try await Self.run { client in
            // A well-formed "none" attestation whose credential public key is (1...1, 1...1).
            let cose = CBOREncoder.encode(
                .map([
                    .int(1): .int(2), .int(3): .int(-7), .int(-1): .int(1),
                    .int(-2): .bytes([UInt8](repeating: 1, count: 32)), .int(-3): .bytes([UInt8](repeating: 1, count: 32)),
                ])
            )
            let response = try await Self.registerPasskey(client, cose: cose)
            #expect(response.errorCode == "invalid_passkey_registration")
            #expect(Self.message(response) == "unsupported_key: invalid ES256 public key")
        }
    }

    @Test("H28 authenticator data shorter than its header") func shortAuthenticatorData() async throws {
        try await Self.run { client in
            let attestation = CBOREncoder.encode(
                .map([.text("fmt"): .text("none"), .text("attStmt"): .map([:]), .text("authData"): .bytes([1, 2, 3])])
            )
            let response = try await Self.verifyRegistration(client, replacing: "attestationObject", with: attestation)
            #expect(response.errorCode == "invalid_passkey_registration")
            #expect(Self.message(response).hasPrefix("malformed"))
        }
    }
}
