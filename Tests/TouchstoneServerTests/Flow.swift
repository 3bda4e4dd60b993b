import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneTesting

/// Small steps of the API, so each test reads as the scenario it checks.
struct Flow {
    let client: any TestClientProtocol
    static let password = "correct horse battery"

    struct Account {
        var token: String
        var userId: String
        var email: String
    }

    func signUp(_ email: String = "user-\(UUID().uuidString.prefix(8))@example.com") async throws -> Account {
        let response = try await self.client.request(.post, "/v1/users", json: ["email": email, "password": Self.password])
        try #require(response.status == .created, "sign-up failed: \(String(decoding: response.body, as: UTF8.self))")
        return Account(
            token: try #require(response.value("session", "token")),
            userId: try #require(response.value("user", "id")),
            email: email
        )
    }

    func signIn(_ email: String) async throws -> String {
        let response = try await self.client.request(.post, "/v1/sessions", json: ["email": email, "password": Self.password])
        try #require(response.status == .ok)
        return try #require(response.value("session", "token"))
    }

    func startRegistration(
        _ token: String,
        _ device: TestDeviceKey,
        deviceId: String = UUID().uuidString,
        publicKey: String? = nil
    ) async throws -> JSONTestResponse {
        try await self.client.request(
            .post,
            "/v1/biometrics/registrations/start",
            token: token,
            json: [
                "publicKey": publicKey ?? device.publicKey(), "algorithm": device.algorithm.rawValue, "deviceId": deviceId,
                "deviceName": "Test phone",
            ]
        )
    }

    /// Registers `device` for the account and returns the registration id.
    func enroll(_ token: String, _ device: TestDeviceKey, deviceId: String = UUID().uuidString) async throws -> String {
        let start = try await self.startRegistration(token, device, deviceId: deviceId)
        try #require(start.status == .ok, "start failed: \(String(decoding: start.body, as: UTF8.self))")
        let id = try #require(start.value("registrationId"))
        let finish = try await self.finishRegistration(token, id, signature: device.signed(try #require(start.value("challenge"))))
        try #require(finish.status == .created, "finish failed: \(String(decoding: finish.body, as: UTF8.self))")
        return id
    }

    func finishRegistration(_ token: String, _ registrationId: String, signature: String) async throws -> JSONTestResponse {
        try await self.client.request(
            .post,
            "/v1/biometrics/registrations/finish",
            token: token,
            json: ["registrationId": registrationId, "signature": signature]
        )
    }

    func startLogin(_ registrationId: String) async throws -> JSONTestResponse {
        try await self.client.request(.post, "/v1/biometrics/authentications/start", json: ["registrationId": registrationId])
    }

    /// Starts a login and returns the challenge.
    func challenge(_ registrationId: String) async throws -> String {
        let start = try await self.startLogin(registrationId)
        try #require(start.status == .ok, "start failed: \(String(decoding: start.body, as: UTF8.self))")
        return try #require(start.value("challenge"))
    }

    func finishLogin(
        _ registrationId: String,
        challenge: String,
        signature: String,
        extra: [String: any Sendable] = [:]
    ) async throws -> JSONTestResponse {
        var body: [String: any Sendable] = ["registrationId": registrationId, "challenge": challenge, "signature": signature]
        body.merge(extra) { $1 }
        return try await self.client.request(.post, "/v1/biometrics/authentications/finish", json: body)
    }

    /// A complete biometric login.
    func login(_ registrationId: String, _ device: TestDeviceKey) async throws -> JSONTestResponse {
        let challenge = try await self.challenge(registrationId)
        return try await self.finishLogin(registrationId, challenge: challenge, signature: device.signed(challenge))
    }
}

extension Flow {
    func setPin(_ token: String, _ registrationId: String, _ pin: String) async throws -> JSONTestResponse {
        try await self.client.request(.put, "/v1/biometrics/registrations/\(registrationId)/pin", token: token, json: ["pin": pin])
    }

    func pinLogin(_ registrationId: String, _ pin: String) async throws -> JSONTestResponse {
        try await self.client.request(.post, "/v1/pin/authentications", json: ["registrationId": registrationId, "pin": pin])
    }

    /// The caller's audit events, newest first (one page).
    func events(_ token: String, query: String = "") async throws -> [[String: Any]] {
        let response = try await self.client.request(.get, "/v1/session/events\(query)", token: token)
        try #require(response.status == .ok, "events failed: \(String(decoding: response.body, as: UTF8.self))")
        return try #require(response.json["events"] as? [[String: Any]])
    }
}
