import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneTesting

/// `POST /v1/biometrics/registrations/{id}/invalidate`: the device reports that its key can no longer be used.
struct InvalidationTests {
    private func invalidate(_ client: any TestClientProtocol, _ id: String, json: [String: any Sendable]) async throws -> JSONTestResponse {
        try await client.request(.post, "/v1/biometrics/registrations/\(id)/invalidate", json: json)
    }

    @Test func theDeviceInvalidatesItsRegistrationWithoutASession() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let registrationId = try await flow.enroll(account.token, device, deviceId: "phone-1")

            let response = try await self.invalidate(client, registrationId, json: ["reason": "biometry_changed", "deviceId": "phone-1"])
            #expect(response.status == .noContent)
            // Shown as such in the device list; sign-ins with it are refused.
            let list = try await client.request(.get, "/v1/biometrics/registrations", token: account.token)
            let registrations = try #require(list.json["registrations"] as? [[String: Any]])
            #expect(registrations.first { $0["id"] as? String == registrationId }?["status"] as? String == "invalidated")
            let start = try await flow.startLogin(registrationId)
            #expect(start.status == .unauthorized)
            #expect(start.errorCode == "registration_revoked")
            // Reporting again is harmless.
            #expect(try await self.invalidate(client, registrationId, json: ["reason": "key_lost", "deviceId": "phone-1"]).status == .noContent)
        }
    }

    @Test func anotherDevicesIdOrAnEndedRegistrationIsNotFound() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let registrationId = try await flow.enroll(account.token, TestDeviceKey(.es256), deviceId: "phone-1")
            for (id, deviceId) in [(registrationId, "phone-2"), ("no-such-registration", "phone-1")] {
                let response = try await self.invalidate(client, id, json: ["reason": "biometry_changed", "deviceId": deviceId])
                #expect(response.status == .notFound)
                #expect(response.errorCode == "registration_not_found")
            }
            // A revoked registration cannot be turned into an invalidated one.
            let deleted = try await client.request(.delete, "/v1/biometrics/registrations/\(registrationId)", token: account.token)
            #expect(deleted.status == .noContent)
            let late = try await self.invalidate(client, registrationId, json: ["reason": "biometry_changed", "deviceId": "phone-1"])
            #expect(late.errorCode == "registration_not_found")
        }
    }

    @Test(arguments: [
        ["reason": "bored", "deviceId": "phone-1"],
        ["deviceId": "phone-1"],
        ["reason": "biometry_changed"],
        ["reason": 7, "deviceId": "phone-1"],
    ] as [[String: any Sendable]])
    func malformedReportsAreInvalidRequests(json: [String: any Sendable]) async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let registrationId = try await flow.enroll(account.token, TestDeviceKey(.es256), deviceId: "phone-1")
            let response = try await self.invalidate(client, registrationId, json: json)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
        }
    }
}
