import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// `/v1/app-attest/...` and the `appAttest` proof of `registrations/start`, with a test certificate authority standing
/// in for Apple's (the verification itself is tested against Apple's published attestation in TouchstoneWebAuthnTests).
struct AppAttestEndpointTests {
    static let appId = "ABCDE12345.com.example.touchstone"

    static func configuration(device: TestAppAttestDevice, required: Bool = false) -> TouchstoneConfiguration {
        TestServer.configuration {
            $0.appAttest.appIds = [appId]
            $0.appAttest.environment = .development
            $0.appAttest.trustAnchors = [device.root]
            $0.appAttest.required = required
        }
    }

    static func challenge(_ client: any TestClientProtocol) async throws -> String {
        let response = try await client.request(.post, "/v1/app-attest/challenges")
        try #require(response.status == .ok)
        return try #require(response.value("challenge"))
    }

    /// Attests a new key the way the SDK does; returns it with its base64 key id.
    static func attestedKey(_ client: any TestClientProtocol, _ device: TestAppAttestDevice) async throws -> (P256.Signing.PrivateKey, String) {
        let key = P256.Signing.PrivateKey()
        let keyId = Data(TestAppAttestDevice.keyId(of: key)).base64EncodedString()
        let challenge = try await Self.challenge(client)
        let attestation = try device.attest(key, clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))))
        let response = try await client.request(
            .post, "/v1/app-attest/keys",
            json: ["keyId": keyId, "attestation": Data(attestation).base64EncodedString(), "challenge": challenge]
        )
        try #require(response.status == .created, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(response.value("environment") == "development")
        return (key, keyId)
    }

    /// `registrations/start` with an App Attest proof over "<challenge>.<publicKey>".
    static func start(
        _ client: any TestClientProtocol,
        token: String,
        device: TestAppAttestDevice,
        key: P256.Signing.PrivateKey,
        keyId: String,
        counter: UInt32,
        deviceKey: TestDeviceKey,
        signedPublicKey: String? = nil
    ) async throws -> JSONTestResponse {
        let publicKey = deviceKey.publicKey()
        let challenge = try await Self.challenge(client)
        let assertion = try device.assert(key, clientData: Array("\(challenge).\(signedPublicKey ?? publicKey)".utf8), counter: counter)
        return try await client.request(
            .post, "/v1/biometrics/registrations/start", token: token,
            json: [
                "publicKey": publicKey, "algorithm": "ES256", "deviceId": UUID().uuidString,
                "appAttest": ["keyId": keyId, "challenge": challenge, "assertion": Data(assertion).base64EncodedString()],
            ]
        )
    }

    @Test func anAttestedAppEnrolsAndTheRegistrationSaysSo() async throws {
        let device = try TestAppAttestDevice(appId: Self.appId)
        try await TestServer.run(configuration: Self.configuration(device: device, required: true)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let (key, keyId) = try await Self.attestedKey(client, device)
            let deviceKey = TestDeviceKey(.es256)
            let start = try await Self.start(client, token: account.token, device: device, key: key, keyId: keyId, counter: 1, deviceKey: deviceKey)
            #expect(start.status == .ok, "\(String(decoding: start.body, as: UTF8.self))")
            let registrationId = try #require(start.value("registrationId"))
            let finish = try await flow.finishRegistration(account.token, registrationId, signature: deviceKey.signed(try #require(start.value("challenge"))))
            #expect(finish.status == .created)
            #expect((finish.json["registration"] as? [String: Any])?["appAttested"] as? Bool == true)
            #expect(try await flow.login(registrationId, deviceKey).status == .ok)
        }
    }

    @Test func enrolmentWithoutAProofIsRefusedWhenRequiredAndUnattestedOtherwise() async throws {
        let device = try TestAppAttestDevice(appId: Self.appId)
        try await TestServer.run(configuration: Self.configuration(device: device, required: true)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let start = try await flow.startRegistration(account.token, TestDeviceKey(.es256))
            #expect(start.status == .forbidden)
            #expect(start.errorCode == "app_attest_required")
        }
        try await TestServer.run(configuration: Self.configuration(device: device, required: false)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let deviceKey = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, deviceKey)
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let registrations = try #require(list.json["registrations"] as? [[String: Any]])
            #expect(registrations.first { $0["id"] as? String == id }?["appAttested"] as? Bool == false)
        }
    }

    @Test func badProofsAreRefusedWithTheirCodes() async throws {
        let device = try TestAppAttestDevice(appId: Self.appId)
        try await TestServer.run(configuration: Self.configuration(device: device)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let (key, keyId) = try await Self.attestedKey(client, device)
            // An assertion over another public key than the one being enrolled.
            let swapped = try await Self.start(
                client, token: account.token, device: device, key: key, keyId: keyId, counter: 1, deviceKey: TestDeviceKey(.es256),
                signedPublicKey: TestDeviceKey(.es256).publicKey())
            #expect(swapped.status == .badRequest)
            #expect(swapped.errorCode == "invalid_app_attest")
            // A counter that does not grow (a replayed or cloned key).
            let first = try await Self.start(client, token: account.token, device: device, key: key, keyId: keyId, counter: 5, deviceKey: TestDeviceKey(.es256))
            #expect(first.status == .ok)
            let replay = try await Self.start(client, token: account.token, device: device, key: key, keyId: keyId, counter: 5, deviceKey: TestDeviceKey(.es256))
            #expect(replay.errorCode == "invalid_app_attest")
            #expect(String(decoding: replay.body, as: UTF8.self).contains("counter_not_increased"))
            // A key never attested.
            let stranger = P256.Signing.PrivateKey()
            let unknown = try await Self.start(
                client, token: account.token, device: device, key: stranger,
                keyId: Data(TestAppAttestDevice.keyId(of: stranger)).base64EncodedString(), counter: 1, deviceKey: TestDeviceKey(.es256))
            #expect(unknown.errorCode == "invalid_app_attest")
        }
    }

    @Test func attestationErrorsHaveTheirCodes() async throws {
        let device = try TestAppAttestDevice(appId: Self.appId)
        try await TestServer.run(configuration: Self.configuration(device: device)) { client in
            // The same key twice.
            let key = P256.Signing.PrivateKey()
            let challenge = try await Self.challenge(client)
            let attestation = try device.attest(key, clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))))
            let ownId = Data(TestAppAttestDevice.keyId(of: key)).base64EncodedString()
            let body: [String: any Sendable] = ["keyId": ownId, "attestation": Data(attestation).base64EncodedString(), "challenge": challenge]
            #expect(try await client.request(.post, "/v1/app-attest/keys", json: body).status == .created)
            let challenge2 = try await Self.challenge(client)
            let attestation2 = try device.attest(key, clientDataHash: Array(SHA256.hash(data: Array(challenge2.utf8))))
            let duplicate = try await client.request(
                .post, "/v1/app-attest/keys",
                json: ["keyId": ownId, "attestation": Data(attestation2).base64EncodedString(), "challenge": challenge2])
            #expect(duplicate.status == .conflict)
            #expect(duplicate.errorCode == "app_attest_key_exists")
            // A used challenge, and an attestation for another challenge.
            let reused = try await client.request(.post, "/v1/app-attest/keys", json: body)
            #expect(reused.errorCode == "challenge_not_found")
            let challenge3 = try await Self.challenge(client)
            let other = P256.Signing.PrivateKey()
            let wrong = try await client.request(
                .post, "/v1/app-attest/keys",
                json: [
                    "keyId": Data(TestAppAttestDevice.keyId(of: other)).base64EncodedString(),
                    "attestation": Data(try device.attest(other, clientDataHash: Array(repeating: 0, count: 32))).base64EncodedString(),
                    "challenge": challenge3,
                ])
            #expect(wrong.status == .badRequest)
            #expect(wrong.errorCode == "invalid_app_attest")
            #expect(String(decoding: wrong.body, as: UTF8.self).contains("nonce_mismatch"))
        }
    }

    @Test func anExpiredChallengeOrAnUnreadableKeyIdIsRefused() async throws {
        let device = try TestAppAttestDevice(appId: Self.appId)
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(device: device), clock: clock) { client in
            let key = P256.Signing.PrivateKey()
            let keyId = Data(TestAppAttestDevice.keyId(of: key)).base64EncodedString()
            let challenge = try await Self.challenge(client)
            let attestation = Data(try device.attest(key, clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))))).base64EncodedString()
            let unreadable = try await client.request(
                .post, "/v1/app-attest/keys", json: ["keyId": "not base64!", "attestation": attestation, "challenge": challenge])
            #expect(unreadable.status == .badRequest)
            #expect(unreadable.errorCode == "invalid_request")

            let late = try await Self.challenge(client)
            let lateAttestation = Data(try device.attest(key, clientDataHash: Array(SHA256.hash(data: Array(late.utf8))))).base64EncodedString()
            clock.advance(by: 121)  // past the default challenge TTL of 120 s
            let expired = try await client.request(
                .post, "/v1/app-attest/keys", json: ["keyId": keyId, "attestation": lateAttestation, "challenge": late])
            #expect(expired.status == .unauthorized)
            #expect(expired.errorCode == "challenge_expired")
        }
    }

    @Test func withoutAppIdsAppAttestIsDisabled() async throws {
        try await TestServer.run { client in
            let response = try await client.request(.post, "/v1/app-attest/challenges")
            #expect(response.status == .forbidden)
            #expect(response.errorCode == "app_attest_disabled")
        }
    }

    @Test func configurationReadsAppAttestSettings() throws {
        let configuration = try TouchstoneConfiguration(environment: [
            "TOUCHSTONE_APP_ATTEST_APP_IDS": "ABCDE12345.com.example.a, ABCDE12345.com.example.b",
            "TOUCHSTONE_APP_ATTEST_ENVIRONMENT": "development", "TOUCHSTONE_REQUIRE_APP_ATTEST": "true",
        ])
        #expect(configuration.appAttest.appIds == ["ABCDE12345.com.example.a", "ABCDE12345.com.example.b"])
        #expect(configuration.appAttest.environment == .development)
        #expect(configuration.appAttest.required)
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_REQUIRE_APP_ATTEST": "true"]) }
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_APP_ATTEST_ENVIRONMENT": "beta"]) }
    }
}
