public import Foundation

extension TouchstoneClient {
    // MARK: Passkeys (the JSON is passed through as the browser APIs take and give it)

    /// `PublicKeyCredentialCreationOptionsJSON` for adding a passkey to the signed-in account.
    public func passkeyRegistrationOptions(token: String) async throws -> Data {
        try await self.exchange("POST", "/v1/passkeys/registrations/options", token: token, body: [String: String]()).body
    }

    /// Sends a `RegistrationResponseJSON`; returns the stored passkey.
    public func verifyPasskeyRegistration(token: String, responseJSON: Data) async throws -> PasskeyInfo {
        struct Body: Decodable { var passkey: PasskeyInfo }
        let response = try await self.exchange("POST", "/v1/passkeys/registrations/verify", token: token, raw: responseJSON)
        return try self.decode(Body.self, response, path: "/v1/passkeys/registrations/verify").passkey
    }

    /// `PublicKeyCredentialRequestOptionsJSON`; with an email, limited to that account's passkeys.
    public func passkeyAuthenticationOptions(email: String? = nil) async throws -> Data {
        try await self.exchange("POST", "/v1/passkeys/authentications/options", token: nil, body: email.map { ["email": $0] } ?? [:]).body
    }

    /// `GET /v1/passkeys`: the account's passkeys.
    public func passkeys(token: String) async throws -> [PasskeyInfo] {
        struct Body: Decodable { var passkeys: [PasskeyInfo] }
        let body: Body = try await self.call("GET", "/v1/passkeys", token: token)
        return body.passkeys
    }

    /// `DELETE /v1/passkeys/{id}`.
    public func deletePasskey(token: String, id: String) async throws {
        try await self.callWithoutResult("DELETE", "/v1/passkeys/\(Self.pathComponent(id))", token: token)
    }

    /// Sends an `AuthenticationResponseJSON`; returns the new session.
    public func verifyPasskeyAuthentication(responseJSON: Data) async throws -> TouchstoneSession {
        let response = try await self.exchange("POST", "/v1/passkeys/authentications/verify", token: nil, raw: responseJSON)
        return try self.decode(TouchstoneSession.self, response, path: "/v1/passkeys/authentications/verify")
    }
}
