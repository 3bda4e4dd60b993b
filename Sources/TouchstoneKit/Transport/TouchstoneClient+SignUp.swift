public import Foundation
import TouchstoneCrypto

/// A device-key sign-up that has been started: sign the exact UTF-8 bytes of `challenge` and finish it.
public struct DeviceKeySignUpGrant: Sendable, Hashable, Codable {
    public var signUpId: String
    public var challenge: String
    public var expiresAt: String
}

// Sign-ups without a password (issue #42): from the phone with a device key, or with a passkey. The Android SDK's
// `TouchstoneClientSignUp.kt`.
extension TouchstoneClient {
    /// `POST /v1/biometrics/sign-ups/start`: the new account's address and the device key (no session).
    public func startSignUp(
        email: String,
        displayName: String?,
        publicKey: DeviceKeyPublicKey,
        deviceId: String,
        deviceName: String?,
        appAttest: AppAttestProof? = nil
    ) async throws -> DeviceKeySignUpGrant {
        struct Body: Encodable {
            var email: String
            var displayName: String?
            var publicKey: String
            var algorithm: String
            var deviceId: String
            var deviceName: String?
            var appAttest: AppAttestProof?
        }
        let body = Body(
            email: email, displayName: displayName, publicKey: Self.encodedPublicKey(publicKey), algorithm: publicKey.algorithm.rawValue,
            deviceId: deviceId, deviceName: deviceName, appAttest: appAttest)
        let path = "/v1/biometrics/sign-ups/start"
        let response = try await self.exchange("POST", path, authorization: nil, raw: try JSONEncoder().encode(body))
        return try self.decode(DeviceKeySignUpGrant.self, response, path: path)
    }

    /// `POST /v1/biometrics/sign-ups/finish`: the account, its first session, the registration and its device
    /// credential (shown once).
    public func finishSignUp(signUpId: String, signature: [UInt8], proofKey: ProofKeyEnrolment? = nil) async throws
        -> (session: TouchstoneSession, registration: BiometricRegistration, deviceCredential: String)
    {
        struct Body: Decodable {
            var user: TouchstoneUser
            var session: TouchstoneSessionInfo
            var registration: BiometricRegistration
            var deviceCredential: String
        }
        let path = "/v1/biometrics/sign-ups/finish"
        var input: [String: AnyEncodable] = ["signUpId": AnyEncodable(signUpId), "signature": AnyEncodable(Base64.urlEncode(signature))]
        input.merge(proofKey?.fields ?? [:]) { $1 }
        let request = try JSONEncoder().encode(input)
        let body = try self.decode(Body.self, try await self.exchange("POST", path, authorization: nil, raw: request), path: path)
        return (TouchstoneSession(user: body.user, session: body.session), body.registration, body.deviceCredential)
    }

    /// `POST /v1/passkeys/sign-ups/options`: creation options for a new account's passkey, as JSON for the platform.
    public func passkeySignUpOptions(email: String, displayName: String?) async throws -> Data {
        var body = ["email": email]
        if let displayName { body["displayName"] = displayName }
        return try await self.exchange("POST", "/v1/passkeys/sign-ups/options", authorization: nil, raw: try JSONEncoder().encode(body)).body
    }

    /// `POST /v1/passkeys/sign-ups/verify`: the registration response (`credential.toJSON()`); the new account's session.
    public func verifyPasskeySignUp(responseJSON: Data) async throws -> TouchstoneSession {
        let path = "/v1/passkeys/sign-ups/verify"
        return try self.decode(TouchstoneSession.self, try await self.exchange("POST", path, authorization: nil, raw: responseJSON), path: path)
    }
}
