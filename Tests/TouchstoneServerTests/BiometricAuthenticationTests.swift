import Foundation
import Crypto
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

struct BiometricAuthenticationTests {
    @Test(arguments: SignatureAlgorithm.allCases)
    func loginOpensABiometricSession(algorithm: SignatureAlgorithm) async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(algorithm)
            let id = try await flow.enroll(account.token, device)
            clock.advance(by: 60)
            let response = try await flow.login(id, device)
            #expect(response.status == .ok)
            #expect(response.value("user", "id") == account.userId)
            #expect(response.any(["session", "methods"]) as? [String] == ["biometric"])
            #expect(response.value("session", "authenticatedAt") == "2027-01-15T08:01:00.000Z")
            let token = try #require(response.value("session", "token"))
            #expect(try await client.request(.get, "/v1/session", token: token).status == .ok)
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: token)
            #expect((list.json["registrations"] as? [[String: Any]])?.first?["lastUsedAt"] as? String == "2027-01-15T08:01:00.000Z")
        }
    }

    @Test func startFindsTheRegistrationByPublicKeyInAnyEncoding() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)  // registered as SPKI DER
            for encoding in [TestDeviceKey.KeyEncoding.x963, .spkiPEM, .compressed] {
                let response = try await client.request(
                    .post,
                    "/v1/biometrics/authentications/start",
                    json: ["publicKey": device.publicKey(encoding, standardBase64: true)]
                )
                #expect(response.status == .ok)
                #expect(response.value("registrationId") == id)
            }
            let unknown = try await client.request(
                .post,
                "/v1/biometrics/authentications/start",
                json: ["publicKey": TestDeviceKey(.eddsa).publicKey()]
            )
            #expect(unknown.status == .notFound)
            #expect(unknown.errorCode == "registration_not_found")
            let garbage = try await client.request(.post, "/v1/biometrics/authentications/start", json: ["publicKey": "@@@"])
            #expect(garbage.errorCode == "invalid_public_key")
            let neither = try await client.request(.post, "/v1/biometrics/authentications/start", json: [:])
            #expect(neither.errorCode == "invalid_request")
        }
    }

    @Test func unknownAndPendingRegistrationsAreNotFound() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let unknown = try await flow.startLogin("00000000-0000-0000-0000-000000000000")
            #expect(unknown.status == .notFound)
            #expect(unknown.errorCode == "registration_not_found")
            let account = try await flow.signUp()
            let pending = try await flow.startRegistration(account.token, TestDeviceKey(.es256))
            let start = try await flow.startLogin(try #require(pending.value("registrationId")))
            #expect(start.errorCode == "registration_not_found")
            let finish = try await flow.finishLogin(try #require(pending.value("registrationId")), challenge: "x", signature: "AAAA")
            #expect(finish.errorCode == "registration_not_found")
        }
    }

    @Test func aReplayedChallengeIsRejected() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let challenge = try await flow.challenge(id)
            let signature = device.signed(challenge)
            #expect(try await flow.finishLogin(id, challenge: challenge, signature: signature).status == .ok)
            let replay = try await flow.finishLogin(id, challenge: challenge, signature: signature)
            #expect(replay.status == .unauthorized)
            #expect(replay.errorCode == "challenge_not_found")
        }
    }

    @Test func anExpiredChallengeIsRejected() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: TestServer.configuration { $0.challengeTTL = .seconds(30) }, clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.eddsa)
            let id = try await flow.enroll(account.token, device)
            let challenge = try await flow.challenge(id)
            clock.advance(by: 30)
            let response = try await flow.finishLogin(id, challenge: challenge, signature: device.signed(challenge))
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "challenge_expired")
            // One second earlier it would have worked.
            let fresh = try await flow.challenge(id)
            clock.advance(by: 29)
            #expect(try await flow.finishLogin(id, challenge: fresh, signature: device.signed(fresh)).status == .ok)
        }
    }

    @Test func aChallengeIsBoundToItsRegistration() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let (keyA, keyB) = (TestDeviceKey(.es256), TestDeviceKey(.es256))
            let a = try await flow.enroll(account.token, keyA)
            let b = try await flow.enroll(account.token, keyB)
            let challengeForA = try await flow.challenge(a)
            let response = try await flow.finishLogin(b, challenge: challengeForA, signature: keyB.signed(challengeForA))
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "challenge_not_found")
            // The attempt did not burn A's challenge.
            #expect(try await flow.finishLogin(a, challenge: challengeForA, signature: keyA.signed(challengeForA)).status == .ok)
        }
    }

    @Test func aRegistrationChallengeCannotBeUsedToLogIn() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let start = try await flow.startRegistration(account.token, device)
            let id = try #require(start.value("registrationId"))
            let registrationChallenge = try #require(start.value("challenge"))
            let signed = device.signed(registrationChallenge)
            _ = try await flow.finishRegistration(account.token, id, signature: signed)
            // Reusing the enrolment challenge (or a fresh unconsumed one) for login fails.
            let response = try await flow.finishLogin(id, challenge: registrationChallenge, signature: signed)
            #expect(response.errorCode == "challenge_not_found")
        }
    }

    @Test func wrongSignaturesAreRejectedAndBurnTheChallenge() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let cases: [(String) -> String] = [
                { TestDeviceKey(.es256).signed($0) },  // another key
                { device.signed($0 + "tampered") },  // another message
                { _ in Base64.urlEncode([UInt8](repeating: 0, count: 64)) },  // zeros
            ]
            for makeSignature in cases {
                let challenge = try await flow.challenge(id)
                let response = try await flow.finishLogin(id, challenge: challenge, signature: makeSignature(challenge))
                #expect(response.status == .unauthorized)
                #expect(response.errorCode == "invalid_signature")
                let retry = try await flow.finishLogin(id, challenge: challenge, signature: device.signed(challenge))
                #expect(retry.errorCode == "challenge_not_found")
            }
            let undecodable = try await flow.finishLogin(id, challenge: try await flow.challenge(id), signature: "!!!")
            #expect(undecodable.status == .badRequest)
            #expect(undecodable.errorCode == "invalid_request")
        }
    }

    @Test func concurrentFinishesWithOneChallengeSucceedExactlyOnce() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let challenge = try await flow.challenge(id)
            let signature = device.signed(challenge)
            let codes = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await flow.finishLogin(id, challenge: challenge, signature: signature)
                        return response.status == .ok ? "ok" : (response.errorCode ?? "?")
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(codes == ["ok": 1, "challenge_not_found": 19])
        }
    }

    /// Two instances on one database. An instance finishes a sign-in whose key it already holds (it served the start)
    /// with one write, one that does not reads the registration first; either way, what changed on the other instance
    /// between the start and the finish (a revocation, a lockout) is what the finish answers. With no key cache, every
    /// finish reads first.
    @Test(arguments: [10_000, 0])
    func signInsAcrossInstancesAnswerWhatTheDatabaseSays(keyCacheSize: Int) async throws {
        let database = TemporaryFiles.path("instances", suffix: ".sqlite")
        defer { TemporaryFiles.remove(database) }
        let kek = [UInt8](repeating: 9, count: 32)
        let clock = ManualClock()
        // Each application closes its store when it stops: each instance opens its own on the one database.
        let storeA = try await SQLTouchstoneStore.sqlite(.file(path: database), logger: Logger(label: "test"))
        try await storeA.migrate()
        let storeB = try await SQLTouchstoneStore.sqlite(.file(path: database), logger: Logger(label: "test"))
        let configuration = TestServer.configuration {
            $0.tokens.keyEncryptionKey = kek
            $0.keyCacheSize = keyCacheSize
        }
        try await TestServer.run(configuration: configuration, clock: clock, store: storeA) { clientA in
            try await TestServer.run(configuration: configuration, clock: clock, store: storeB) { clientB in
                let (a, b) = (Flow(client: clientA), Flow(client: clientB))
                let account = try await a.signUp()
                let device = TestDeviceKey(.es256)
                let id = try await a.enroll(account.token, device)

                // Started on A, finished on B (which has never seen the registration), and the other way round.
                var challenge = try await a.challenge(id)
                #expect(try await b.finishLogin(id, challenge: challenge, signature: device.signed(challenge)).status == .ok)
                challenge = try await b.challenge(id)
                #expect(try await a.finishLogin(id, challenge: challenge, signature: device.signed(challenge)).status == .ok)
                // A challenge used on one is spent on the other.
                challenge = try await a.challenge(id)
                let signature = device.signed(challenge)
                #expect(try await a.finishLogin(id, challenge: challenge, signature: signature).status == .ok)
                #expect(try await b.finishLogin(id, challenge: challenge, signature: signature).errorCode == "challenge_not_found")

                // Locked on B (wrong signatures) after A issued a challenge: A's valid finish is refused as locked, and
                // the challenge stays unspent.
                let pending = try await a.challenge(id)
                for _ in 0..<5 {
                    let wrong = try await b.challenge(id)
                    #expect(try await b.finishLogin(id, challenge: wrong, signature: TestDeviceKey(.es256).signed(wrong)).errorCode == "invalid_signature")
                }
                let locked = try await a.finishLogin(id, challenge: pending, signature: device.signed(pending))
                #expect(locked.status.code == 423)
                #expect(locked.errorCode == "registration_locked")

                // Revoked on B after A issued a challenge: A's valid finish is refused as revoked.
                let other = TestDeviceKey(.eddsa)
                let second = try await a.enroll(account.token, other)
                let issued = try await a.challenge(second)
                let revoked = try await clientB.request(.delete, "/v1/biometrics/registrations/\(second)", token: account.token)
                #expect(revoked.status == .noContent)
                let afterRevocation = try await a.finishLogin(second, challenge: issued, signature: other.signed(issued))
                #expect(afterRevocation.errorCode == "registration_revoked")

                // Each sign-in that succeeded left one audit event; the refused ones none.
                let logins = try await a.events(account.token).filter { $0["type"] as? String == "biometric_login" && $0["outcome"] as? String == "success" }
                #expect(logins.count == 3)
            }
        }
    }

    /// A sign-in's start stores nothing: its challenge carries the registration and expiry under a MAC whose key every
    /// instance derives from the key-encryption key they share (instances with different ones refuse to start on one
    /// database). An altered challenge, or one made in the same format under another key (another deployment's), is
    /// refused as unknown and counts for no lockout; the challenge is recorded when it is answered, and then only once.
    @Test func signInChallengesAreRecordedOnlyWhenAnsweredAndCountOnlyUnderTheirKey() async throws {
        let database = TemporaryFiles.path("challenge-keys", suffix: ".sqlite")
        defer { TemporaryFiles.remove(database) }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: database), logger: Logger(label: "test"))
        try await store.migrate()
        let configuration = TestServer.configuration { $0.tokens.keyEncryptionKey = [UInt8](repeating: 9, count: 32) }
        try await TestServer.run(configuration: configuration, store: store) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)

            let issued = try await flow.challenge(id)
            #expect(issued.count == 55)
            // Not stored: no row holds the value (any row with it would count as answered).
            #expect(try await store.signInAttempt(registrationId: id, challenge: issued)?.challengeUsed == false)

            var refused = [JSONTestResponse]()
            var bytes = try #require(Base64.urlDecodeCanonical(issued))
            bytes[8] ^= 1  // the expiry, moved
            let altered = Base64.urlEncode(bytes)
            refused.append(try await flow.finishLogin(id, challenge: altered, signature: device.signed(altered)))
            let otherKeys = [
                SelfContainedChallenges(key: SymmetricKey(data: [UInt8](repeating: 3, count: 32))),
                SelfContainedChallenges(derivingFrom: SymmetricKey(data: [UInt8](repeating: 8, count: 32)), purpose: "touchstone biometric sign-in challenge v1"),
            ]
            for other in otherKeys {
                let madeUp = other.issue(for: id, expiresAtMillis: Int64.max, nonce: [UInt8](repeating: 0, count: 16))
                refused.append(try await flow.finishLogin(id, challenge: madeUp, signature: device.signed(madeUp)))
            }
            refused.append(try await flow.finishLogin(id, challenge: String(issued.dropLast()), signature: device.signed(issued)))
            #expect(refused.map(\.errorCode) == Array(repeating: "challenge_not_found", count: 4))
            #expect(try await store.registration(id: id)?.failedAttempts == 0)
            // The same format under this deployment's key is what the server issues.
            let ours = SelfContainedChallenges(
                derivingFrom: SymmetricKey(data: [UInt8](repeating: 9, count: 32)), purpose: "touchstone biometric sign-in challenge v1"
            )
            #expect(ours.expiry(of: issued, for: id) != nil)

            // Answered: recorded, once.
            #expect(try await flow.finishLogin(id, challenge: issued, signature: device.signed(issued)).status == .ok)
            #expect(try await store.signInAttempt(registrationId: id, challenge: issued)?.challengeUsed == true)
            #expect(try await flow.finishLogin(id, challenge: issued, signature: device.signed(issued)).errorCode == "challenge_not_found")
        }
    }

    @Test func sessionDurationCanBeShortenedButNotExtended() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.sessionLifetime = .seconds(3600) }) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            for (minutes, expected) in [(5, "2027-01-15T08:05:00.000Z"), (600, "2027-01-15T09:00:00.000Z")] {
                let challenge = try await flow.challenge(id)
                let response = try await flow.finishLogin(
                    id,
                    challenge: challenge,
                    signature: device.signed(challenge),
                    extra: ["sessionDurationMinutes": minutes]
                )
                #expect(response.value("session", "expiresAt") == expected)
            }
            let challenge = try await flow.challenge(id)
            let zero = try await flow.finishLogin(
                id,
                challenge: challenge,
                signature: device.signed(challenge),
                extra: ["sessionDurationMinutes": 0]
            )
            #expect(zero.errorCode == "invalid_request")
        }
    }

    @Test func idleTimeoutAppliesToBiometricSessions() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let token = try #require(try await flow.login(id, device).value("session", "token"))
            clock.advance(by: 15 * 60 + 1)
            #expect(try await client.request(.get, "/v1/session", token: token).errorCode == "unauthenticated")
        }
    }
}
