import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// A time the server both stores and answers reads the same in the answer that made it and in every later read
/// (issue #29, item 2: a confirmation answered `createdAt` `...18.338Z` when made and `...18.337Z` when read back).
struct TimestampTests {
    // MARK: The format

    /// The API's format is the second as Foundation writes it and the millisecond the store keeps (rounded, not
    /// truncated): Foundation's own fractional format truncates, and `Date(millis:)` is often a hair below its
    /// millisecond as a binary fraction, so it wrote `.337` for a time stored as 338 milliseconds.
    @Test func rfc3339IsTheStoredMillisecond() throws {
        let seconds = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt)
        func expected(_ millis: Int64) -> String {
            let whole = Date(timeIntervalSince1970: Double(millis / 1000)).formatted(seconds)
            let fraction = String(millis % 1000)
            return whole.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
        }
        var generator = SystemRandomNumberGenerator()
        var millis: [Int64] = [0, 1, 999, 86_399_999, 951_782_400_000, 951_868_799_999, 4_102_444_800_000, 253_402_300_799_999]
        millis += (0..<2000).map { _ in Int64.random(in: 0...4_102_444_800_000, using: &generator) }
        for value in millis {
            let date = Date(millis: value)
            #expect(date.rfc3339 == expected(value), "\(value)")
            // Any time within the millisecond around it is written as that millisecond.
            for offset in [-0.000_499, -0.000_1, 0.000_1, 0.000_499] {
                let near = Date(timeIntervalSince1970: Double(value) / 1000 + offset)
                #expect(near.rfc3339 == Date(millis: near.millis).rfc3339, "\(value) \(offset)")
                #expect(near.rfc3339 == date.rfc3339, "\(value) \(offset)")
            }
        }
        #expect(Date(timeIntervalSince1970: 1_764_129_498.337_6).rfc3339 == "2025-11-26T03:58:18.338Z")
        #expect(Date(timeIntervalSince1970: -0.000_4).rfc3339 == "1970-01-01T00:00:00.000Z")
        #expect(Date(timeIntervalSince1970: -1).rfc3339 == "1969-12-31T23:59:59.000Z")
    }

    // MARK: Through the API

    /// Creates and reads back sessions, users, registrations, passkeys, confirmations and signing keys in a loop, on a
    /// clock that is never on a millisecond: every time read back is the time answered at creation.
    @Test func createdAndReadBackTimesAgree() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000.000_4))
        let configuration = TestServer.configuration {
            $0.passkeys.rpId = "app.example"
            $0.passkeys.origins = [PasskeyTests.origin]
        }
        try await TestServer.runWithAdminKey(configuration: configuration, clock: clock) { client, adminKey, _ in
            let flow = Flow(client: client)
            for round in 0..<12 {
                clock.advance(by: 0.000_337_5 + Double(round) * 0.000_123_7)
                // A user and its session.
                let email = "time-\(round)@example.com"
                let signUp = try await client.request(.post, "/v1/users", json: ["email": email, "password": Flow.password])
                let token = try #require(signUp.value("session", "token"))
                let session = try await client.request(.get, "/v1/session", token: token)
                for field in ["expiresAt", "idleExpiresAt", "authenticatedAt"] {
                    #expect(session.value("session", field) == signUp.value("session", field), "session.\(field), round \(round)")
                }
                #expect(session.value("user", "createdAt") == signUp.value("user", "createdAt"), "user.createdAt, round \(round)")

                // A registration.
                clock.advance(by: 0.000_41)
                let device = TestDeviceKey(.es256)
                let start = try await flow.startRegistration(token, device)
                let id = try #require(start.value("registrationId"))
                let finish = try await flow.finishRegistration(token, id, signature: device.signed(try #require(start.value("challenge"))))
                let registrations = try await client.request(.get, "/v1/biometrics/registrations", token: token)
                let listed = (registrations.any(["registrations"]) as? [[String: Any]])?.first { $0["id"] as? String == id }
                #expect(listed?["createdAt"] as? String == finish.value("registration", "createdAt"), "registration, round \(round)")

                // A passkey.
                clock.advance(by: 0.000_29)
                let (_, registered) = try await PasskeyTests.Browser(client: client).register(token)
                #expect(registered.status == .created)
                let passkeys = try await client.request(.get, "/v1/passkeys", token: token)
                let passkey = (passkeys.any(["passkeys"]) as? [[String: Any]])?.first
                #expect(passkey?["createdAt"] as? String == registered.value("passkey", "createdAt"), "passkey, round \(round)")

                // A confirmation.
                clock.advance(by: 0.000_77)
                let created = try await client.request(.post, "/v1/confirmations", token: token, json: ["summary": "Pay €1.00 to ACME"])
                let confirmationId = try #require(created.value("confirmation", "id"))
                let read = try await client.request(.get, "/v1/confirmations/\(confirmationId)", token: token)
                for field in ["createdAt", "expiresAt"] {
                    #expect(read.value("confirmation", field) == created.value("confirmation", field), "confirmation.\(field), round \(round)")
                }
            }
            // Signing keys: a rotation's answer and the list agree.
            for round in 0..<3 {
                clock.advance(by: 0.000_613 * Double(round + 1))
                let rotated = try await client.request(.post, "/v1/admin/signing-keys/rotate", token: adminKey, json: [:])
                #expect(rotated.status == .created)
                let kid = try #require(rotated.value("kid"))
                let list = try await client.request(.get, "/v1/admin/signing-keys", token: adminKey)
                let key = (list.any(["keys"]) as? [[String: Any]])?.first { $0["kid"] as? String == kid }
                for field in ["createdAt", "activatesAt"] {
                    #expect(key?[field] as? String == rotated.value(field), "signing key \(field), round \(round)")
                }
            }
        }
    }
}
