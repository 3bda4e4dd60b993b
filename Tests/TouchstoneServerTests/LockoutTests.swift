import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// Consecutive failed signatures lock a registration (423 `registration_locked`); a success resets the count; the
/// owner unlocks after a password sign-in.
struct LockoutTests {
    /// A wrong signature on a fresh challenge (signed by another key).
    private func fail(_ flow: Flow, _ registrationId: String) async throws -> JSONTestResponse {
        let challenge = try await flow.challenge(registrationId)
        return try await flow.finishLogin(registrationId, challenge: challenge, signature: TestDeviceKey(.es256).signed(challenge))
    }

    /// A fresh database for each test (``TestServer/run(_:configuration:clock:store:_:)`` removes it afterwards).
    static var configuration: TouchstoneConfiguration { TestServer.configuration { $0.lockoutThreshold = 3 } }

    @Test func consecutiveFailuresLockAndTheOwnerUnlocks() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            for _ in 0..<3 { #expect(try await self.fail(flow, id).errorCode == "invalid_signature") }

            // Locked: no challenge, and a challenge issued before the lock cannot be used either.
            let start = try await flow.startLogin(id)
            #expect(start.status.code == 423)
            #expect(start.errorCode == "registration_locked")
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let registrations = try #require(list.json["registrations"] as? [[String: Any]])
            #expect(registrations.first?["status"] as? String == "locked")

            // The owner unlocks with a recent password session.
            let unlock = try await client.request(.post, "/v1/biometrics/registrations/\(id)/unlock", token: account.token)
            #expect(unlock.status == .ok)
            #expect((unlock.json["registration"] as? [String: Any])?["status"] as? String == "active")
            #expect(try await flow.login(id, device).status == .ok)
            // Unlocking what is not locked is a conflict.
            let again = try await client.request(.post, "/v1/biometrics/registrations/\(id)/unlock", token: account.token)
            #expect(again.status == .conflict)
            #expect(again.errorCode == "registration_not_locked")
        }
    }

    @Test func aChallengeIssuedBeforeTheLockIsRefused() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            let early = try await flow.challenge(id)
            for _ in 0..<3 { _ = try await self.fail(flow, id) }
            let finish = try await flow.finishLogin(id, challenge: early, signature: device.signed(early))
            #expect(finish.status.code == 423)
            #expect(finish.errorCode == "registration_locked")
        }
    }

    @Test func aSuccessResetsTheCount() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            for _ in 0..<2 { _ = try await self.fail(flow, id) }
            #expect(try await flow.login(id, device).status == .ok)
            for _ in 0..<2 { _ = try await self.fail(flow, id) }
            #expect(try await flow.login(id, device).status == .ok)  // 2 + 2 failures never reached 3 in a row
        }
    }

    @Test func unlockingNeedsTheOwnersRecentPassword() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration, clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let other = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            for _ in 0..<3 { _ = try await self.fail(flow, id) }
            let stranger = try await client.request(.post, "/v1/biometrics/registrations/\(id)/unlock", token: other.token)
            #expect(stranger.errorCode == "registration_not_found")
            clock.advance(by: 11 * 60)  // past the reauthentication window, within the idle timeout
            let stale = try await client.request(.post, "/v1/biometrics/registrations/\(id)/unlock", token: account.token)
            #expect(stale.errorCode == "reauthentication_required")
            let fresh = try await flow.signIn(account.email)
            #expect(try await client.request(.post, "/v1/biometrics/registrations/\(id)/unlock", token: fresh).status == .ok)
        }
    }

    @Test func reEnablingTheDeviceReplacesALockedRegistration() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256), deviceId: "phone")
            for _ in 0..<3 { _ = try await self.fail(flow, id) }
            let device = TestDeviceKey(.es256)
            let newId = try await flow.enroll(account.token, device, deviceId: "phone")
            #expect(try await flow.login(newId, device).status == .ok)
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let registrations = try #require(list.json["registrations"] as? [[String: Any]])
            #expect(registrations.first { $0["id"] as? String == id }?["status"] as? String == "replaced")
        }
    }

    @Test func theThresholdIsConfigurable() throws {
        #expect(TouchstoneConfiguration().lockoutThreshold == 5)
        #expect(try TouchstoneConfiguration(environment: ["TOUCHSTONE_LOCKOUT_THRESHOLD": "10"]).lockoutThreshold == 10)
        for value in ["0", "101", "x"] {
            #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_LOCKOUT_THRESHOLD": value]) }
        }
    }
}
