import Foundation
import HTTPTypes
import Logging
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// A challenge gets exactly one attempt. Of several concurrent attempts with one challenge, the one whose write records
/// it first wins; the others, whatever they carried, are told `challenge_not_found` and leave nothing behind: no
/// session, no audit event of a sign-in, no failed attempt counted. ``RacingStore`` plays the winner just before the
/// loser's write, which is where a real concurrent attempt would have to land.
struct LostRaceTests {
    private static func store(_ name: String) async throws -> (RacingStore, SQLTouchstoneStore, String) {
        let database = TemporaryFiles.path(name, suffix: ".sqlite")
        let inner = try await SQLTouchstoneStore.sqlite(.file(path: database), logger: Logger(label: "test"))
        try await inner.migrate()
        return (RacingStore(inner), inner, database)
    }

    /// Biometric: a wrong signature, a right one read on the full path (key not held), and a right one on the fast
    /// path (key held), each losing to a concurrent attempt.
    @Test(arguments: [0, 10_000])
    func biometricSignInsThatLoseTheRaceAreRefusedAndLeaveNothing(keyCacheSize: Int) async throws {
        let (store, inner, database) = try await Self.store("biometric-race")
        defer { TemporaryFiles.remove(database) }
        let configuration = TestServer.configuration { $0.keyCacheSize = keyCacheSize }
        let clock = ManualClock()
        try await TestServer.run(configuration: configuration, clock: clock, store: store.store) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)

            // A wrong signature (always the full path): not counted toward the lockout, since the attempt had no
            // challenge left to spend.
            let first = try await flow.challenge(id)
            store.loseNextRace()
            let wrong = try await flow.finishLogin(id, challenge: first, signature: TestDeviceKey(.es256).signed(first))
            #expect(wrong.errorCode == "challenge_not_found")
            #expect(try await inner.registration(id: id)?.failedAttempts == 0)

            // A right signature: no session, no sign-in event; with the key held the fast write changes nothing and the
            // full path reads the challenge as answered, without it the completing write changes nothing.
            let second = try await flow.challenge(id)
            store.loseNextRace()
            let right = try await flow.finishLogin(id, challenge: second, signature: device.signed(second))
            #expect(right.errorCode == "challenge_not_found")
            #expect(right.status == .unauthorized)
            #expect(store.racesLost == 2)
            #expect(try await inner.signInAttempt(registrationId: id, challenge: second)?.challengeUsed == true)
            let logins = try await flow.events(account.token).filter { $0["type"] as? String == "biometric_login" }
            #expect(logins.allSatisfy { $0["outcome"] as? String != "success" })
            #expect(try await inner.activeSessions(userId: account.userId, at: clock.now).count == 1)  // the sign-up's

            // Unarmed, the next challenge signs in.
            #expect(try await flow.login(id, device).status == .ok)
        }
    }

    /// Passkeys: a valid assertion, an invalid one, and an unknown credential answering a challenge issued for any
    /// account, each losing to a concurrent attempt.
    @Test func passkeySignInsThatLoseTheRaceAreRefusedAndLeaveNothing() async throws {
        let (store, inner, database) = try await Self.store("passkey-race")
        defer { TemporaryFiles.remove(database) }
        let clock = ManualClock()
        try await TestServer.run(configuration: PasskeyTests.configuration(), clock: clock, store: store.store) { client in
            let account = try await Flow(client: client).signUp("race@example.com")
            let browser = PasskeyTests.Browser(client: client)
            var (credential, _) = try await browser.register(account.token)
            let credentialId = Base64.urlEncode(credential.id)
            let creation = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            var (stranger, _) = try VirtualAuthenticator().respond(toCreationOptions: Array(creation.body), origin: PasskeyTests.origin)
            func options() async throws -> String {
                let options = try await client.request(.post, "/v1/passkeys/authentications/options", json: [:])
                return try #require(options.value("challenge"))
            }
            func answer(_ challenge: String, unknownCredential: Bool = false, damaged: Bool = false) async throws -> JSONTestResponse {
                let requestOptions: [String: Any] = ["challenge": challenge, "rpId": "app.example", "allowCredentials": []]
                let body = Array(try JSONSerialization.data(withJSONObject: requestOptions))
                let assertion = unknownCredential
                    ? try VirtualAuthenticator().respond(toRequestOptions: body, credential: &stranger, origin: PasskeyTests.origin)
                    : try browser.authenticator.respond(toRequestOptions: body, credential: &credential, origin: PasskeyTests.origin)
                let raw = damaged ? try PasskeyTests.damagingSignature(of: assertion) : String(decoding: assertion, as: UTF8.self)
                return try await client.request(.post, "/v1/passkeys/authentications/verify", raw: raw)
            }
            let signCount = try #require(try await inner.passkey(credentialId: credentialId)?.signCount)

            var refused = [JSONTestResponse]()
            var spent = [String]()
            for (unknown, damaged) in [(false, false), (false, true), (true, false)] {
                let challenge = try await options()
                spent.append(challenge)
                store.loseNextRace()
                refused.append(try await answer(challenge, unknownCredential: unknown, damaged: damaged))
            }
            #expect(refused.map(\.errorCode) == Array(repeating: "challenge_not_found", count: 3))
            #expect(store.racesLost == 3)
            for challenge in spent {
                #expect(try await inner.passkeySignInAttempt(credentialId: credentialId, challenge: challenge)?.challengeUsed == true)
            }
            // The valid assertion that lost stored nothing of its use; the sign count is the registration's.
            let passkey = try #require(try await inner.passkey(credentialId: credentialId))
            #expect(passkey.signCount == signCount)
            #expect(try await inner.activeSessions(userId: account.userId, at: clock.now).count == 1)  // the sign-up's

            // Unarmed, the next challenge signs in.
            #expect(try await answer(try await options()).status == .ok)
        }
    }
}
