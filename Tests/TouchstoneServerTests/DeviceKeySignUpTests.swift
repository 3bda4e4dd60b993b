import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// Device-key sign-up (issue #42): `POST /v1/biometrics/sign-ups/start` and `/finish` create an account from the phone
/// with a device key, no password and no passkey.
struct DeviceKeySignUpTests {
    static func start(
        _ client: any TestClientProtocol,
        _ email: String,
        _ device: TestDeviceKey,
        deviceId: String = UUID().uuidString,
        extra: [String: any Sendable] = [:]
    ) async throws -> JSONTestResponse {
        var body: [String: any Sendable] = ["email": email, "publicKey": device.publicKey(), "algorithm": "ES256", "deviceId": deviceId]
        for (key, value) in extra { body[key] = value }
        return try await client.request(.post, "/v1/biometrics/sign-ups/start", json: body)
    }

    static func finish(_ client: any TestClientProtocol, _ started: JSONTestResponse, _ device: TestDeviceKey) async throws -> JSONTestResponse {
        let challenge = try #require(started.value("challenge"))
        return try await client.request(
            .post, "/v1/biometrics/sign-ups/finish",
            json: ["signUpId": try #require(started.value("signUpId")), "signature": device.signed(challenge)]
        )
    }

    @Test(arguments: NulInputTests.databases)
    func aDeviceKeyAloneCreatesTheAccount(database: NulInputTests.Database) async throws {
        try await NulInputTests.withStore(database) { store in
            let mailbox = TestMailbox()
            try await TestServer.run(store: store, mailbox: mailbox) { client in
                let email = "phone-\(UUID().uuidString.prefix(8).lowercased())@example.com"
                let device = TestDeviceKey(.es256)
                let started = try await Self.start(client, email, device, extra: ["displayName": "Sam", "deviceName": "Sam's phone"])
                #expect(started.status == .ok)
                let done = try await Self.finish(client, started, device)
                #expect(done.status == .created)
                #expect(done.headers[.cacheControl] == "no-store")
                #expect(done.value("user", "email") == email && done.value("user", "displayName") == "Sam")
                #expect(done.any(["user", "hasPassword"]) as? Bool == false)
                #expect(done.any(["session", "methods"]) as? [String] == ["biometric"])
                #expect(done.value("registration", "status") == "active")
                #expect(done.value("registration", "deviceName") == "Sam's phone")
                #expect(done.value("deviceCredential")?.isEmpty == false)
                let token = try #require(done.value("session", "token"))
                let registrationId = try #require(done.value("registration", "id"))
                // A strong session (the export works), a device key that signs in, a verification mail.
                #expect(try await client.request(.get, "/v1/users/me/export", token: token).status == .ok)
                #expect(try await Flow(client: client).login(registrationId, device).status == .ok)
                _ = try await mailbox.waitForMail(to: email, kind: "verify_email")
                // Used once; the address is taken now; the device too (for another address).
                #expect(try await Self.finish(client, started, device).errorCode == "challenge_not_found")
                #expect(try await Self.start(client, email, TestDeviceKey(.es256)).errorCode == "email_taken")
                let deviceId = try #require(done.value("registration", "deviceId"))
                let again = try await Self.start(client, "other-\(email)", TestDeviceKey(.es256), deviceId: deviceId)
                #expect(again.status == .conflict && again.errorCode == "device_enrolled_for_another_user")
                // The last credential of an account without a password stays.
                let removal = try await client.request(.delete, "/v1/biometrics/registrations/\(registrationId)", token: token)
                #expect(removal.errorCode == "last_credential")
            }
        }
    }

    @Test func badSignUpsAreRefusedAndCreateNothing() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let device = TestDeviceKey(.es256)
            // A wrong signature uses the sign-up up.
            let wrong = try await Self.start(client, "wrong@example.com", device)
            let refused = try await Self.finish(client, wrong, TestDeviceKey(.es256))
            #expect(refused.status == .unauthorized && refused.errorCode == "invalid_signature")
            #expect(try await Self.finish(client, wrong, device).errorCode == "challenge_not_found")
            // Expired.
            let late = try await Self.start(client, "late@example.com", device)
            clock.advance(by: 121)
            #expect(try await Self.finish(client, late, device).errorCode == "challenge_expired")
            // Keys and algorithms as enrolment checks them.
            let badKey = try await client.request(
                .post, "/v1/biometrics/sign-ups/start", json: ["email": "key@example.com", "publicKey": "AAAA", "algorithm": "ES256", "deviceId": "d"])
            #expect(badKey.status == .badRequest && badKey.errorCode == "invalid_public_key")
            let badAlgorithm = try await Self.start(client, "alg@example.com", device, extra: ["algorithm": "HS256"])
            #expect(badAlgorithm.errorCode == "unsupported_algorithm")
            let unknown = try await client.request(.post, "/v1/biometrics/sign-ups/finish", json: ["signUpId": "nope", "signature": "AAAA"])
            #expect(unknown.errorCode == "challenge_not_found")
            // Nothing was created: every address is still free.
            for email in ["wrong@example.com", "late@example.com", "key@example.com"] {
                #expect(try await Self.start(client, email, TestDeviceKey(.es256)).status == .ok, "\(email)")
            }
        }
    }

    @Test func integrityRulesApplyAsAtEnrolment() async throws {
        let keystore = try TestAndroidKeystore()
        let configuration = AndroidKeyAttestationTests.configuration(keystore: keystore, required: true)
        try await TestServer.run(configuration: configuration) { client in
            let device = TestDeviceKey(.es256)
            let bare = try await Self.start(client, "bare@example.com", device)
            #expect(bare.status == .forbidden && bare.errorCode == "android_key_attestation_required")
            // A key made with a sign-up challenge (no session: there is no account yet) is attested and recorded.
            let issued = try await client.request(.post, "/v1/android-key-attestation/sign-up-challenges")
            let challenge = try #require(issued.value("challenge"))
            let chain = try AndroidKeyAttestationTests.chain(keystore, for: device, challenge: challenge) { $0.securityLevel = 2 }
            let started = try await Self.start(client, "attested@example.com", device, extra: ["keyAttestation": chain])
            try #require(started.status == .ok, "\(String(decoding: started.body, as: UTF8.self))")
            let done = try await Self.finish(client, started, device)
            #expect(done.status == .created)
            let attestation = try #require((done.json["registration"] as? [String: Any])?["keyAttestation"] as? [String: Any])
            #expect(attestation["securityLevel"] as? String == "strongbox")
            // A sign-up challenge is used once, and an account's enrolment challenge is not a sign-up's.
            let reused = try await Self.start(client, "reused@example.com", TestDeviceKey(.es256), extra: ["keyAttestation": chain])
            #expect(reused.status != .ok)
            let token = try #require(done.value("session", "token"))
            let accountChallenge = try await AndroidKeyAttestationTests.challenge(client, token: token)
            let other = TestDeviceKey(.es256)
            let crossed = try AndroidKeyAttestationTests.chain(keystore, for: other, challenge: accountChallenge)
            let refused = try await Self.start(client, "crossed@example.com", other, extra: ["keyAttestation": crossed])
            #expect(refused.errorCode == "challenge_not_found")
        }
    }
}
