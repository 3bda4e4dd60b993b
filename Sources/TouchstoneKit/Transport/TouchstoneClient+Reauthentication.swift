public import Foundation
import TouchstoneCrypto

// Fresh strong authentication (issue #42): proving a password, a passkey or a device key again in a live session, so
// privileged acts (enrolment, PINs, the address, the password, recovery codes, the export, deletion) are allowed for
// the server's window (`TOUCHSTONE_REAUTH_SECONDS`). The Android SDK's `TouchstoneClientReauthentication.kt`.
extension TouchstoneClient {
    private struct Reauthenticated: Decodable { var session: TouchstoneSessionInfo }

    /// `POST /v1/session/reauthenticate` with the account's password; returns the session as it now is (same token).
    public func reauthenticate(password: String, token: String) async throws -> TouchstoneSessionInfo {
        try await self.reauthenticate(["password": password], token: token)
    }

    /// `POST /v1/session/reauthenticate/device-key-challenge`: a challenge for `registrationId`, bound to this session.
    public func reauthenticationChallenge(registrationId: String, token: String) async throws -> ChallengeGrant {
        let body = try JSONEncoder().encode(["registrationId": registrationId])
        let path = "/v1/session/reauthenticate/device-key-challenge"
        let response = try await self.exchange("POST", path, token: token, raw: body)
        return try self.decode(ChallengeGrant.self, response, path: path)
    }

    /// `POST /v1/session/reauthenticate` with a device-key signature over the challenge's UTF-8 bytes.
    public func reauthenticate(registrationId: String, challenge: String, signature: [UInt8], token: String) async throws
        -> TouchstoneSessionInfo
    {
        let proof = ["registrationId": registrationId, "challenge": challenge, "signature": Base64.urlEncode(signature)]
        return try await self.reauthenticate(["deviceKey": proof], token: token)
    }

    /// `POST /v1/session/reauthenticate/passkey-options`: WebAuthn request options (user verification required) for
    /// the account's passkeys, as JSON for the platform's passkey API.
    public func reauthenticationPasskeyOptions(token: String) async throws -> Data {
        try await self.exchange("POST", "/v1/session/reauthenticate/passkey-options", token: token, raw: nil).body
    }

    /// `POST /v1/session/reauthenticate` with a passkey assertion (`credential.toJSON()`) over those options.
    public func reauthenticate(passkeyAssertionJSON: Data, token: String) async throws -> TouchstoneSessionInfo {
        guard let assertion = try? JSONSerialization.jsonObject(with: passkeyAssertionJSON) as? [String: Any] else {
            throw BiometricLoginError(.internalFailure, "the passkey's answer is not a JSON object")
        }
        let body = try JSONSerialization.data(withJSONObject: ["passkey": assertion])
        return try await self.reauthenticate(raw: body, token: token)
    }

    private func reauthenticate(_ proof: some Encodable, token: String) async throws -> TouchstoneSessionInfo {
        try await self.reauthenticate(raw: try JSONEncoder().encode(proof), token: token)
    }

    private func reauthenticate(raw body: Data, token: String) async throws -> TouchstoneSessionInfo {
        let path = "/v1/session/reauthenticate"
        let response = try await self.exchange("POST", path, token: token, raw: body)
        return try self.decode(Reauthenticated.self, response, path: path).session
    }
}
