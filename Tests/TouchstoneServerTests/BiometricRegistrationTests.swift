import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

struct BiometricRegistrationTests {
    @Test(arguments: SignatureAlgorithm.allCases)
    func registrationProvesPossessionAndIsListed(algorithm: SignatureAlgorithm) async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(algorithm)
            let start = try await flow.startRegistration(account.token, device, deviceId: "device-1")
            #expect(start.status == .ok)
            let challenge = try #require(start.value("challenge"))
            #expect(Base64.decode(challenge)?.count == 32)
            #expect(start.value("expiresAt") == "2027-01-15T08:02:00.000Z")
            let id = try #require(start.value("registrationId"))

            let finish = try await flow.finishRegistration(account.token, id, signature: device.signed(challenge))
            #expect(finish.status == .created)
            #expect(finish.value("registration", "id") == id)
            #expect(finish.value("registration", "status") == "active")
            #expect(finish.value("registration", "algorithm") == algorithm.rawValue)
            #expect(finish.value("registration", "deviceId") == "device-1")
            #expect(finish.value("registration", "deviceName") == "Test phone")
            #expect(finish.value("registration", "userId") == account.userId)

            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let registrations = try #require(list.json["registrations"] as? [[String: Any]])
            #expect(registrations.map { $0["id"] as? String } == [id])
            #expect(registrations[0]["lastUsedAt"] is NSNull)
        }
    }

    @Test(arguments: [TestDeviceKey.KeyEncoding.spkiPEM, .spkiDER, .x963])
    func keysAreAcceptedInEveryEncodingAndStandardBase64Signatures(encoding: TestDeviceKey.KeyEncoding) async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let start = try await flow.startRegistration(account.token, device, publicKey: device.publicKey(encoding, standardBase64: true))
            #expect(start.status == .ok)
            let challenge = try #require(start.value("challenge"))
            let standard = Data(device.signature(over: challenge, encoding: .raw)).base64EncodedString()
            let finish = try await flow.finishRegistration(account.token, try #require(start.value("registrationId")), signature: standard)
            #expect(finish.status == .created)
        }
    }

    @Test func listIsNewestFirst() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let first = try await flow.enroll(account.token, TestDeviceKey(.es256))
            clock.advance(by: 5)
            let second = try await flow.enroll(account.token, TestDeviceKey(.eddsa))
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let ids = (list.json["registrations"] as? [[String: Any]])?.map { $0["id"] as? String }
            #expect(ids == [second, first])
        }
    }

    @Test func registrationRoutesNeedASession() async throws {
        try await TestServer.run { client in
            for (method, path) in [
                (HTTPRequest.Method.post, "/v1/biometrics/registrations/start"), (.post, "/v1/biometrics/registrations/finish"),
                (.get, "/v1/biometrics/registrations"), (.delete, "/v1/biometrics/registrations/abc"),
            ] {
                let response = try await client.request(method, path, json: [:])
                #expect(response.status == .unauthorized)
                #expect(response.errorCode == "unauthenticated")
            }
        }
    }

    @Test func startNeedsARecentPasswordAuthentication() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            clock.advance(by: 9 * 60)
            #expect(try await flow.startRegistration(account.token, TestDeviceKey(.es256)).status == .ok)
            clock.advance(by: 2 * 60)  // 11 minutes after the password; the session itself is still alive
            let stale = try await flow.startRegistration(account.token, TestDeviceKey(.es256))
            #expect(stale.status == .forbidden)
            #expect(stale.errorCode == "reauthentication_required")
            // Signing in with the password again restores the right.
            let fresh = try await flow.signIn(account.email)
            #expect(try await flow.startRegistration(fresh, TestDeviceKey(.es256)).status == .ok)
        }
    }

    /// A device key is a strong proof (issue #42): its fresh session adds a device; past the window it needs a new proof.
    @Test func aFreshBiometricSessionAddsDevicesAndAStaleOneDoesNot() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let biometricToken = try #require(try await flow.login(id, device).value("session", "token"))
            #expect(try await flow.startRegistration(biometricToken, TestDeviceKey(.es256)).status == .ok)
            clock.advance(by: 11 * 60)
            let stale = try await flow.startRegistration(biometricToken, TestDeviceKey(.es256))
            #expect(stale.status == .forbidden)
            #expect(stale.errorCode == "reauthentication_required")
        }
    }

    @Test(arguments: ["ES999", "HS256", "es256", "none"])
    func unknownAlgorithmsAreUnsupported(name: String) async throws {
        try await TestServer.run { client in
            let account = try await Flow(client: client).signUp()
            let response = try await client.request(
                .post,
                "/v1/biometrics/registrations/start",
                token: account.token,
                json: ["publicKey": TestDeviceKey(.es256).publicKey(), "algorithm": name, "deviceId": "d"]
            )
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "unsupported_algorithm")
        }
    }

    @Test func algorithmsTheServerDisallowsAreUnsupported() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.algorithms = [.es256] }) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let response = try await flow.startRegistration(account.token, TestDeviceKey(.eddsa))
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "unsupported_algorithm")
        }
    }

    @Test func invalidPublicKeysAreRejectedAndNeverStored() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            var offCurve = TestDeviceKey(.es256).publicKeyBytes(.x963)
            offCurve[64] ^= 1
            let cases: [(SignatureAlgorithm, String)] = [
                (.es256, Base64.urlEncode(offCurve)),
                (.es256, "not base64 at all!"),
                (.es256, Base64.urlEncode(TestDeviceKey(.eddsa).publicKeyBytes(.raw))),
                (.eddsa, Base64.urlEncode([UInt8](repeating: 1, count: 31))),
                (.rs256, Base64.urlEncode(TestDeviceKey(.es256).publicKeyBytes(.spkiDER))),
                (.es256, Base64.urlEncode(Array(TestDeviceKey(.es256).publicKeyBytes(.spkiDER).dropLast()))),
            ]
            for (algorithm, key) in cases {
                let response = try await client.request(
                    .post,
                    "/v1/biometrics/registrations/start",
                    token: account.token,
                    json: ["publicKey": key, "algorithm": algorithm.rawValue, "deviceId": "d"]
                )
                #expect(response.status == .badRequest, "\(algorithm) \(key)")
                #expect(response.errorCode == "invalid_public_key")
            }
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            #expect((list.json["registrations"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func finishRejectsASignatureByAnotherKey() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let start = try await flow.startRegistration(account.token, device)
            let id = try #require(start.value("registrationId"))
            let forged = TestDeviceKey(.es256).signed(try #require(start.value("challenge")))
            let response = try await flow.finishRegistration(account.token, id, signature: forged)
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "invalid_signature")
            // The challenge was used up by the failed attempt.
            let retry = try await flow.finishRegistration(account.token, id, signature: device.signed(try #require(start.value("challenge"))))
            #expect(retry.errorCode == "challenge_not_found")
        }
    }

    @Test func finishAfterTheChallengeExpiredIsRejected() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let start = try await flow.startRegistration(account.token, device)
            clock.advance(by: 121)
            let response = try await flow.finishRegistration(
                account.token,
                try #require(start.value("registrationId")),
                signature: device.signed(try #require(start.value("challenge")))
            )
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "challenge_expired")
        }
    }

    @Test func finishingTwiceFindsNoChallenge() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let start = try await flow.startRegistration(account.token, device)
            let id = try #require(start.value("registrationId"))
            let signature = device.signed(try #require(start.value("challenge")))
            #expect(try await flow.finishRegistration(account.token, id, signature: signature).status == .created)
            let again = try await flow.finishRegistration(account.token, id, signature: signature)
            #expect(again.status == .unauthorized)
            #expect(again.errorCode == "challenge_not_found")
        }
    }

    @Test func anotherUsersRegistrationIsNotFound() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let owner = try await flow.signUp()
            let intruder = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let start = try await flow.startRegistration(owner.token, device)
            let id = try #require(start.value("registrationId"))
            let finish = try await flow.finishRegistration(intruder.token, id, signature: device.signed(try #require(start.value("challenge"))))
            #expect(finish.status == .notFound)
            #expect(finish.errorCode == "registration_not_found")
            _ = try await flow.finishRegistration(owner.token, id, signature: device.signed(try #require(start.value("challenge"))))
            let delete = try await client.request(.delete, "/v1/biometrics/registrations/\(id)", token: intruder.token)
            #expect(delete.status == .notFound)
            #expect(delete.errorCode == "registration_not_found")
            let unknown = try await client.request(.delete, "/v1/biometrics/registrations/nope", token: owner.token)
            #expect(unknown.errorCode == "registration_not_found")
        }
    }

    @Test func oneAccountPerDevice() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let first = try await flow.signUp()
            let second = try await flow.signUp()
            _ = try await flow.enroll(first.token, TestDeviceKey(.es256), deviceId: "family-ipad")
            let response = try await flow.startRegistration(second.token, TestDeviceKey(.es256), deviceId: "family-ipad")
            #expect(response.status == .conflict)
            #expect(response.errorCode == "device_enrolled_for_another_user")
        }
    }

    @Test func oneAccountPerDeviceHoldsWhenBothStartedBeforeEitherFinished() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let first = try await flow.signUp()
            let second = try await flow.signUp()
            let (deviceA, deviceB) = (TestDeviceKey(.es256), TestDeviceKey(.es256))
            let startA = try await flow.startRegistration(first.token, deviceA, deviceId: "shared")
            let startB = try await flow.startRegistration(second.token, deviceB, deviceId: "shared")
            let finishA = try await flow.finishRegistration(
                first.token,
                try #require(startA.value("registrationId")),
                signature: deviceA.signed(try #require(startA.value("challenge")))
            )
            #expect(finishA.status == .created)
            let finishB = try await flow.finishRegistration(
                second.token,
                try #require(startB.value("registrationId")),
                signature: deviceB.signed(try #require(startB.value("challenge")))
            )
            #expect(finishB.status == .conflict)
            #expect(finishB.errorCode == "device_enrolled_for_another_user")
        }
    }

    @Test func deletedRegistrationsAreRevokedAndCannotLogIn() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let delete = try await client.request(.delete, "/v1/biometrics/registrations/\(id)", token: account.token)
            #expect(delete.status == .noContent)
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            #expect((list.json["registrations"] as? [[String: Any]])?.first?["status"] as? String == "revoked")
            let start = try await flow.startLogin(id)
            #expect(start.status == .unauthorized)
            #expect(start.errorCode == "registration_revoked")
        }
    }

    @Test func reEnrollingTheSameDeviceReplacesItsRegistration() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let (oldKey, newKey) = (TestDeviceKey(.es256), TestDeviceKey(.es256))
            let old = try await flow.enroll(account.token, oldKey, deviceId: "phone")
            let other = try await flow.enroll(account.token, TestDeviceKey(.eddsa), deviceId: "tablet")
            let new = try await flow.enroll(account.token, newKey, deviceId: "phone")
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let statuses = Dictionary(
                uniqueKeysWithValues: ((list.json["registrations"] as? [[String: Any]]) ?? []).map {
                    ($0["id"] as! String, $0["status"] as! String)
                }
            )
            #expect(statuses == [old: "replaced", other: "active", new: "active"])
            let revoked = try await flow.startLogin(old)
            #expect(revoked.errorCode == "registration_revoked")
            #expect(try await flow.login(new, newKey).status == .ok)
        }
    }

    @Test func singleDevicePolicyReplacesEveryOtherDevice() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.devicePolicy = .singleDevice }) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let (phoneKey, tabletKey) = (TestDeviceKey(.es256), TestDeviceKey(.es256))
            let phone = try await flow.enroll(account.token, phoneKey, deviceId: "phone")
            let challenge = try await flow.challenge(phone)  // the phone is mid-login when the tablet enrols
            let tablet = try await flow.enroll(account.token, tabletKey, deviceId: "tablet")
            let finish = try await flow.finishLogin(phone, challenge: challenge, signature: phoneKey.signed(challenge))
            #expect(finish.status == .unauthorized)
            #expect(finish.errorCode == "registration_revoked")
            #expect(try await flow.startLogin(phone).errorCode == "registration_revoked")
            #expect(try await flow.login(tablet, tabletKey).status == .ok)
        }
    }

    @Test func biometricsDisabledByConfiguration() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.biometricsEnabled = false }) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let start = try await flow.startRegistration(account.token, TestDeviceKey(.es256))
            #expect(start.status == .forbidden)
            #expect(start.errorCode == "biometrics_disabled")
            let login = try await flow.startLogin("anything")
            #expect(login.errorCode == "biometrics_disabled")
            let finish = try await flow.finishLogin("anything", challenge: "c", signature: "AAAA")
            #expect(finish.errorCode == "biometrics_disabled")
        }
    }
}
