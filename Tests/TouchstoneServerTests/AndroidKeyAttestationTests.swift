import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn
import X509

/// `/v1/android-key-attestation/challenges` and the `keyAttestation` chain of `registrations/start`, with a keystore made
/// in the test standing in for a phone's (the verification is also tested on a real Pixel chain in
/// TouchstoneWebAuthnTests).
struct AndroidKeyAttestationTests {
    static func configuration(
        keystore: TestAndroidKeystore,
        required: Bool = false,
        statusFile: String? = nil,
        _ customize: (inout TouchstoneConfiguration) -> Void = { _ in }
    ) -> TouchstoneConfiguration {
        TestServer.configuration {
            $0.passkeys.androidApps = [AndroidApp(parsing: TestAndroidKeystore.appEntry)!]
            $0.androidKeyAttestation.trustAnchors = [keystore.root]
            $0.androidKeyAttestation.required = required
            $0.androidKeyAttestation.statusFile = statusFile
            customize(&$0)
        }
    }

    static func challenge(_ client: any TestClientProtocol, token: String) async throws -> String {
        let response = try await client.request(.post, "/v1/android-key-attestation/challenges", token: token)
        try #require(response.status == .ok, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(response.value("expiresAt") != nil)
        return try #require(response.value("challenge"))
    }

    /// `registrations/start` with `keyAttestation`, as an Android app sends it.
    static func start(_ client: any TestClientProtocol, token: String, deviceKey: TestDeviceKey, chain: [String]) async throws -> JSONTestResponse {
        try await client.request(
            .post, "/v1/biometrics/registrations/start", token: token,
            json: ["publicKey": deviceKey.publicKey(), "algorithm": "ES256", "deviceId": UUID().uuidString, "keyAttestation": chain]
        )
    }

    /// A chain for `deviceKey` from `keystore`, attesting `challenge` (as the app passes it to
    /// `setAttestationChallenge`: base64url-decoded), edited by `edit`.
    static func chain(
        _ keystore: TestAndroidKeystore,
        for deviceKey: TestDeviceKey,
        challenge: String,
        _ edit: (inout TestAndroidKeystore.Key) -> Void = { _ in }
    ) throws -> [String] {
        var key = TestAndroidKeystore.Key(challenge: try #require(Base64.decode(challenge)))
        edit(&key)
        return try keystore.encodedChain(for: try #require(deviceKey.p256PublicKey), key: key)
    }

    static func message(_ response: JSONTestResponse) -> String {
        ((response.json["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    @Test func anAttestedKeyEnrolsAndTheRegistrationRecordsIt() async throws {
        let keystore = try TestAndroidKeystore()
        try await TestServer.run(configuration: Self.configuration(keystore: keystore, required: true)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            for (level, name) in [(1, "tee"), (2, "strongbox")] {
                let deviceKey = TestDeviceKey(.es256)
                let challenge = try await Self.challenge(client, token: account.token)
                let chain = try Self.chain(keystore, for: deviceKey, challenge: challenge) { $0.securityLevel = level }
                let start = try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: chain)
                try #require(start.status == .ok, "\(String(decoding: start.body, as: UTF8.self))")
                let registrationId = try #require(start.value("registrationId"))
                let finish = try await flow.finishRegistration(
                    account.token, registrationId, signature: deviceKey.signed(try #require(start.value("challenge"))))
                #expect(finish.status == .created)
                let attestation = try #require((finish.json["registration"] as? [String: Any])?["keyAttestation"] as? [String: Any])
                #expect(attestation["platform"] as? String == "android")
                #expect(attestation["securityLevel"] as? String == name)
                #expect(attestation["packageName"] as? String == "com.example.touchstone")
                #expect(try await flow.login(registrationId, deviceKey).status == .ok)
            }
            // The list says it too, read back from the store.
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let registrations = try #require(list.json["registrations"] as? [[String: Any]])
            #expect(registrations.compactMap { ($0["keyAttestation"] as? [String: Any])?["securityLevel"] as? String }.sorted() == ["strongbox", "tee"])
        }
    }

    @Test func enrolmentWithoutAProofIsRefusedWhenRequiredAndUnattestedOtherwise() async throws {
        let keystore = try TestAndroidKeystore()
        try await TestServer.run(configuration: Self.configuration(keystore: keystore, required: true)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let start = try await flow.startRegistration(account.token, TestDeviceKey(.es256))
            #expect(start.status == .forbidden)
            #expect(start.errorCode == "android_key_attestation_required")
        }
        // Both switches on: either proof will do, and the error names both.
        let both = Self.configuration(keystore: keystore, required: true) {
            $0.appAttest.appIds = ["ABCDE12345.com.example.touchstone"]
            $0.appAttest.required = true
        }
        try await TestServer.run(configuration: both) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let start = try await flow.startRegistration(account.token, TestDeviceKey(.es256))
            #expect(start.status == .forbidden)
            #expect(start.errorCode == "device_attestation_required")
            let deviceKey = TestDeviceKey(.es256)
            let chain = try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token))
            #expect(try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: chain).status == .ok)
            // Not both at once.
            let twice = try await client.request(
                .post, "/v1/biometrics/registrations/start", token: account.token,
                json: [
                    "publicKey": deviceKey.publicKey(), "algorithm": "ES256", "deviceId": UUID().uuidString, "keyAttestation": chain,
                    "appAttest": ["keyId": "AAAA", "challenge": "x", "assertion": "AAAA"],
                ])
            #expect(twice.status == .badRequest)
            #expect(twice.errorCode == "invalid_request")
        }
        try await TestServer.run(configuration: Self.configuration(keystore: keystore)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let registration = try #require((list.json["registrations"] as? [[String: Any]])?.first { $0["id"] as? String == id })
            #expect(registration["keyAttestation"] is NSNull)
        }
    }

    @Test func challengesAreSingleUseUnexpiredAndTheUsers() async throws {
        let keystore = try TestAndroidKeystore()
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(keystore: keystore), clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let other = try await flow.signUp()
            let deviceKey = TestDeviceKey(.es256)
            let challenge = try await Self.challenge(client, token: account.token)
            let chain = try Self.chain(keystore, for: deviceKey, challenge: challenge)
            // Another user cannot enrol with it (and it is spent).
            let stolen = try await Self.start(client, token: other.token, deviceKey: deviceKey, chain: chain)
            #expect(stolen.status == .unauthorized)
            #expect(stolen.errorCode == "challenge_not_found")
            #expect(try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: chain).errorCode == "challenge_not_found")
            // Used once.
            let fresh = try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token))
            #expect(try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: fresh).status == .ok)
            #expect(try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: fresh).errorCode == "challenge_not_found")
            // Never issued.
            let made = try Self.chain(keystore, for: deviceKey, challenge: Base64.urlEncode(Array(repeating: 9, count: 32)))
            #expect(try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: made).errorCode == "challenge_not_found")
            // Expired.
            let late = try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token))
            clock.advance(by: 121)  // past the default challenge TTL of 120 s
            let expired = try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: late)
            #expect(expired.status == .unauthorized)
            #expect(expired.errorCode == "challenge_expired")
        }
    }

    @Test func badChainsAreRefusedWithTheirReasons() async throws {
        let keystore = try TestAndroidKeystore()
        try await TestServer.run(configuration: Self.configuration(keystore: keystore)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let cases: [(String, (inout TestAndroidKeystore.Key) -> Void)] = [
                ("no_biometric_authentication", { $0.noAuthRequired = true; $0.userAuthType = nil }),
                ("not_hardware_backed", { $0.securityLevel = 0 }),
                ("not_generated_for_signing", { $0.origin = 2 }),
                ("all_applications", { $0.allApplications = true }),
                ("app_not_allowed", { $0.packageNames = ["com.example.other"] }),
            ]
            for (reason, edit) in cases {
                let deviceKey = TestDeviceKey(.es256)
                let chain = try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token), edit)
                let response = try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: chain)
                #expect(response.status == .badRequest, "\(reason)")
                #expect(response.errorCode == "invalid_key_attestation", "\(reason)")
                #expect(Self.message(response).hasPrefix(reason), "\(Self.message(response))")
            }
            // A chain for another key than the one enrolled.
            let challenge = try await Self.challenge(client, token: account.token)
            let swapped = try await Self.start(
                client, token: account.token, deviceKey: TestDeviceKey(.es256),
                chain: try Self.chain(keystore, for: TestDeviceKey(.es256), challenge: challenge))
            #expect(swapped.errorCode == "invalid_key_attestation")
            #expect(Self.message(swapped).hasPrefix("key_mismatch"))
            // Certificates that are not base64, or none.
            let deviceKey = TestDeviceKey(.es256)
            for chain in [["not base64!"], []] {
                let response = try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: chain)
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "invalid_request")
            }
            let notCertificates = try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: ["AAAA"])
            #expect(notCertificates.errorCode == "invalid_key_attestation")
            #expect(Self.message(notCertificates).hasPrefix("malformed"))
        }
        // Google's roots, the default, do not know the test keystore.
        let googleRooted = Self.configuration(keystore: keystore) { $0.androidKeyAttestation.trustAnchors = AndroidKeyAttestationVerifier.googleRoots }
        try await TestServer.run(configuration: googleRooted) { client in
            let account = try await Flow(client: client).signUp()
            let deviceKey = TestDeviceKey(.es256)
            let chain = try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token))
            let response = try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: chain)
            #expect(response.errorCode == "invalid_key_attestation")
            #expect(Self.message(response).hasPrefix("untrusted_certificate"))
        }
    }

    @Test func revocationsComeFromTheStatusFileWhichFailsClosed() async throws {
        let keystore = try TestAndroidKeystore()
        let statusFile = TemporaryFiles.path("android-status", suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: statusFile) }
        let batchKey = keystore.intermediate.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
        try Data(#"{"entries": {"\#(batchKey)": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#.utf8).write(to: URL(fileURLWithPath: statusFile))
        try await TestServer.run(configuration: Self.configuration(keystore: keystore, statusFile: statusFile)) { client in
            let account = try await Flow(client: client).signUp()
            let deviceKey = TestDeviceKey(.es256)
            let revoked = try await Self.start(
                client, token: account.token, deviceKey: deviceKey,
                chain: try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token)))
            #expect(revoked.errorCode == "invalid_key_attestation")
            #expect(Self.message(revoked).hasPrefix("revoked"))
            // The operator refreshes the list: read again without a restart.
            try Data(#"{"entries": {}}"#.utf8).write(to: URL(fileURLWithPath: statusFile))
            let accepted = try await Self.start(
                client, token: account.token, deviceKey: deviceKey,
                chain: try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token)))
            #expect(accepted.status == .ok, "\(String(decoding: accepted.body, as: UTF8.self))")
            // A list that cannot be read refuses enrolments with 503 rather than skipping the check.
            try FileManager.default.removeItem(atPath: statusFile)
            let unavailable = try await Self.start(
                client, token: account.token, deviceKey: deviceKey,
                chain: try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token)))
            #expect(unavailable.status == .serviceUnavailable)
            #expect(unavailable.errorCode == "attestation_status_unavailable")
        }
    }

    @Test func withoutAndroidAppsKeyAttestationIsDisabled() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let response = try await client.request(.post, "/v1/android-key-attestation/challenges", token: account.token)
            #expect(response.status == .forbidden)
            #expect(response.errorCode == "android_key_attestation_disabled")
            let keystore = try TestAndroidKeystore()
            let deviceKey = TestDeviceKey(.es256)
            let start = try await Self.start(
                client, token: account.token, deviceKey: deviceKey,
                chain: try Self.chain(keystore, for: deviceKey, challenge: Base64.urlEncode(Array(repeating: 1, count: 32))))
            #expect(start.errorCode == "android_key_attestation_disabled")
            // The challenge endpoint needs a session.
            let anonymous = try await client.request(.post, "/v1/android-key-attestation/challenges")
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test func configurationReadsAndroidKeyAttestationSettings() async throws {
        let configuration = try TouchstoneConfiguration(environment: [
            "TOUCHSTONE_ANDROID_APPS": TestAndroidKeystore.appEntry,
            "TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION": "true",
            "TOUCHSTONE_ANDROID_ATTESTATION_ROOTS": "/etc/touchstone/android-roots.pem",
            "TOUCHSTONE_ANDROID_ATTESTATION_STATUS_FILE": "/var/lib/touchstone/status.json",
        ])
        #expect(configuration.androidKeyAttestation.required)
        #expect(configuration.androidKeyAttestation.rootsFile == "/etc/touchstone/android-roots.pem")
        #expect(configuration.androidKeyAttestation.statusFile == "/var/lib/touchstone/status.json")
        #expect(TouchstoneConfiguration().androidKeyAttestation.trustAnchors == AndroidKeyAttestationVerifier.googleRoots)
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION": "true"]) }
        #expect(throws: ConfigurationError.self) {
            try TouchstoneConfiguration(environment: ["TOUCHSTONE_ANDROID_APPS": TestAndroidKeystore.appEntry, "TOUCHSTONE_REQUIRE_ANDROID_KEY_ATTESTATION": "yes"])
        }
    }

    @Test func unusableRootsOrStatusFilesStopTheServerFromStarting() async throws {
        let keystore = try TestAndroidKeystore()
        let notPEM = TemporaryFiles.path("not-roots", suffix: ".pem")
        let badStatus = TemporaryFiles.path("bad-status", suffix: ".json")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: notPEM))
        try Data(#"{"entries": {"zz": {"status": "REVOKED"}}}"#.utf8).write(to: URL(fileURLWithPath: badStatus))
        defer {
            try? FileManager.default.removeItem(atPath: notPEM)
            try? FileManager.default.removeItem(atPath: badStatus)
        }
        for customize in [
            { (c: inout TouchstoneConfiguration) in c.androidKeyAttestation.rootsFile = "/nonexistent/roots.pem" },
            { (c: inout TouchstoneConfiguration) in c.androidKeyAttestation.rootsFile = notPEM },
            { (c: inout TouchstoneConfiguration) in c.androidKeyAttestation.statusFile = "/nonexistent/status.json" },
            { (c: inout TouchstoneConfiguration) in c.androidKeyAttestation.statusFile = badStatus },
        ] {
            let configuration = Self.configuration(keystore: keystore, customize)
            defer { TestServer.removeDatabase(of: configuration) }
            await #expect(throws: (any Error).self) {
                _ = try await buildApplication(configuration: configuration, dependencies: TestServer.dependencies(clock: ManualClock()))
            }
        }
        // A roots file replaces Google's roots.
        let rootsFile = TemporaryFiles.path("android-roots", suffix: ".pem")
        try Data(try keystore.rootPEM.utf8).write(to: URL(fileURLWithPath: rootsFile))
        defer { try? FileManager.default.removeItem(atPath: rootsFile) }
        let fromFile = Self.configuration(keystore: keystore) {
            $0.androidKeyAttestation.trustAnchors = AndroidKeyAttestationVerifier.googleRoots
            $0.androidKeyAttestation.rootsFile = rootsFile
        }
        try await TestServer.run(configuration: fromFile) { client in
            let account = try await Flow(client: client).signUp()
            let deviceKey = TestDeviceKey(.es256)
            let chain = try Self.chain(keystore, for: deviceKey, challenge: try await Self.challenge(client, token: account.token))
            #expect(try await Self.start(client, token: account.token, deviceKey: deviceKey, chain: chain).status == .ok)
        }
    }
}
