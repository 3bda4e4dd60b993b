public import Foundation
public import TouchstoneCrypto

/// Typed calls to the Touchstone HTTP API, v1. Every failure is a ``BiometricLoginError`` (`.server` or `.transport`).
public struct TouchstoneClient: Sendable {
    public let transport: any TouchstoneTransport
    /// Access tokens already issued, shared by every copy of this client.
    let accessTokens: AccessTokenCache
    /// Sessions bound to a proof key (DPoP) and the server's latest nonce, shared by every copy of this client.
    let dpop = DPoPBindings()

    /// - Parameters:
    ///   - transport: How requests reach the server.
    ///   - now: The clock that decides when a cached access token is too old (tests inject their own).
    public init(transport: any TouchstoneTransport, now: @escaping @Sendable () -> Date = { Date() }) {
        self.transport = transport
        self.accessTokens = AccessTokenCache(now: now)
    }

    /// A client for the server at `baseURL` over `URLSession`.
    public init(baseURL: URL) {
        self.init(transport: URLSessionTransport(baseURL: baseURL))
    }

    // MARK: Server and accounts

    public func configuration() async throws -> ServerConfiguration {
        try await self.call("GET", "/v1/config")
    }

    public func createUser(email: String, password: String, displayName: String? = nil) async throws -> TouchstoneSession {
        try await self.call("POST", "/v1/users", body: ["email": email, "password": password, "displayName": displayName])
    }

    public func signIn(email: String, password: String) async throws -> TouchstoneSession {
        try await self.call("POST", "/v1/sessions", body: ["email": email, "password": password])
    }

    public func currentSession(token: String) async throws -> TouchstoneSession {
        try await self.call("GET", "/v1/session", token: token)
    }

    public func signOut(token: String) async throws {
        try await self.callWithoutResult("DELETE", "/v1/session", token: token)
        await self.dpop.unbind(token: token)
    }

    // MARK: Email and recovery (docs/recovery.md)

    /// Mails a new verification code and link to the session's address (`POST /v1/email/verification`).
    public func resendEmailVerification(token: String) async throws {
        _ = try await self.exchange("POST", "/v1/email/verification", token: token, body: String?.none)
    }

    /// Verifies the session's address with the mailed 6-digit code; returns the user with `emailVerified`.
    public func confirmEmailVerification(code: String, token: String) async throws -> TouchstoneUser {
        let answer: UserEnvelope = try await self.call("POST", "/v1/email/verification/confirm", token: token, body: ["code": code])
        return answer.user
    }

    /// Verifies an address with the token of the mailed link (the part after `#verify-email=`), without a session.
    public func confirmEmailVerification(linkToken: String) async throws -> TouchstoneUser {
        let answer: UserEnvelope = try await self.call("POST", "/v1/email/verification/confirm", body: ["token": linkToken])
        return answer.user
    }

    /// "Forgot password?": a code and link go to the address if it has an account; the answer is the same either way.
    public func requestPasswordReset(email: String) async throws {
        _ = try await self.exchange("POST", "/v1/password-resets", token: nil, body: ["email": email])
    }

    /// Sets a new password with the mailed code. Every session of the account ends; ``PasswordReset/signedIn`` is a
    /// new session unless the account has passkeys or device keys.
    public func resetPassword(email: String, code: String, newPassword: String) async throws -> PasswordReset {
        try await self.call("POST", "/v1/password-resets/confirm", body: ["email": email, "code": code, "newPassword": newPassword])
    }

    /// Sets a new password with the token of the mailed link (the part after `#reset-password=`).
    public func resetPassword(linkToken: String, newPassword: String) async throws -> PasswordReset {
        try await self.call("POST", "/v1/password-resets/confirm", body: ["token": linkToken, "newPassword": newPassword])
    }

    /// "Email me a code": a 6-digit sign-in code goes to the address if it has an account.
    public func requestEmailCode(email: String) async throws {
        _ = try await self.exchange("POST", "/v1/email-codes", token: nil, body: ["email": email])
    }

    /// Signs in with a mailed code: an `email_code` session, which cannot enrol devices or passkeys.
    public func signIn(email: String, emailCode: String) async throws -> TouchstoneSession {
        try await self.call("POST", "/v1/email-codes/verify", body: ["email": email, "code": emailCode])
    }

    /// Asks to change the account's address: a code and link go to `newEmail`, a notice to the current address; needs a
    /// password or passkey sign-in in the last few minutes.
    public func requestEmailChange(to newEmail: String, token: String) async throws {
        _ = try await self.exchange("PUT", "/v1/session/email", token: token, body: ["email": newEmail])
    }

    /// Confirms the new address with the code mailed to it; returns the user with the new, verified address.
    public func confirmEmailChange(code: String, token: String) async throws -> TouchstoneUser {
        let answer: UserEnvelope = try await self.call("POST", "/v1/session/email/confirm", token: token, body: ["code": code])
        return answer.user
    }

    /// Ten new recovery codes (`xxxxx-xxxxx`), shown this once; needs a password or passkey sign-in in the last few
    /// minutes. The previous codes stop working.
    public func generateRecoveryCodes(token: String) async throws -> [String] {
        let answer: RecoveryCodesEnvelope = try await self.call("POST", "/v1/recovery-codes", token: token, body: nil)
        return answer.codes
    }

    /// Signs in with a recovery code: a `recovery_code` session that may enrol one new device or passkey.
    public func signIn(email: String, recoveryCode: String) async throws -> TouchstoneSession {
        try await self.call("POST", "/v1/recovery-codes/verify", body: ["email": email, "code": recoveryCode])
    }

    private struct UserEnvelope: Decodable { var user: TouchstoneUser }
    private struct RecoveryCodesEnvelope: Decodable { var codes: [String] }

    // MARK: Access tokens

    /// An access token (a short-lived JWT) for the app's own API, from the session.
    ///
    /// A token issued earlier for this session is returned while it has more than `minimumLifetime` seconds left;
    /// otherwise a new one is asked for, and callers that ask at the same time share that one request.
    ///
    /// ```swift
    /// var request = URLRequest(url: api.appendingPathComponent("orders"))
    /// request.setValue("Bearer \(try await client.accessToken(for: session))", forHTTPHeaderField: "Authorization")
    /// ```
    ///
    /// - Throws: ``BiometricLoginError`` with ``BiometricLoginError/Code/sessionEnded`` when the session is over
    ///   (signed out, revoked, expired): sign the user in again.
    public func accessToken(for session: TouchstoneSession, minimumLifetime: TimeInterval = 30) async throws -> String {
        try await self.accessTokens.token(for: session.session.token, minimumLifetime: minimumLifetime) {
            try await self.issueAccessToken(sessionToken: session.session.token)
        }.token
    }

    /// `POST /v1/session/token`: a new access token, uncached.
    public func issueAccessToken(sessionToken: String) async throws -> AccessToken {
        struct Body: Decodable {
            var accessToken: String
            var expiresIn: Int
        }
        let requestedAt = self.accessTokens.now()
        do {
            let body: Body = try await self.call("POST", "/v1/session/token", token: sessionToken)
            return AccessToken(token: body.accessToken, expiresAt: requestedAt.addingTimeInterval(TimeInterval(body.expiresIn)))
        } catch let error as BiometricLoginError where error.httpStatus == 401 {
            throw BiometricLoginError(.sessionEnded, error.message, serverCode: error.serverCode, httpStatus: error.httpStatus)
        }
    }

    // MARK: Confirmations

    /// `GET /v1/confirmations/{id}` with the user's session.
    public func confirmation(id: String, token: String) async throws -> ConfirmationInfo {
        try await self.confirmationRequest(id: id, token: token).0
    }

    /// The confirmation and what `BiometricLogin.confirm` takes to approve it (its id, summary and payload).
    public func confirmationRequest(id: String, token: String) async throws -> (ConfirmationInfo, ConfirmationRequest) {
        struct Body: Decodable {
            var confirmation: ConfirmationInfo
            var payload: String
        }
        let body: Body = try await self.call("GET", "/v1/confirmations/\(Self.pathComponent(id))", token: token)
        return (body.confirmation, ConfirmationRequest(id: body.confirmation.id, summary: body.confirmation.summary, payload: body.payload))
    }

    /// `POST /v1/confirmations` with the user's session (details as a JSON object of strings): what `confirm` takes.
    public func createConfirmation(summary: String, details: [String: String] = [:], ttlSeconds: Int? = nil, token: String) async throws
        -> ConfirmationRequest
    {
        struct Body: Encodable {
            var summary: String
            var details: [String: String]
            var ttlSeconds: Int?
        }
        struct Created: Decodable {
            var confirmation: ConfirmationInfo
            var payload: String
        }
        let created: Created = try await self.call(
            "POST",
            "/v1/confirmations",
            token: token,
            encodable: Body(summary: summary, details: details, ttlSeconds: ttlSeconds)
        )
        return ConfirmationRequest(id: created.confirmation.id, summary: created.confirmation.summary, payload: created.payload)
    }

    /// `POST /v1/confirmations/{id}/approve`: the device key's signature over the payload's UTF-8 bytes.
    public func approveConfirmation(id: String, registrationId: String, signature: [UInt8]) async throws -> ApprovedConfirmation {
        try await self.call(
            "POST",
            "/v1/confirmations/\(Self.pathComponent(id))/approve",
            body: ["registrationId": registrationId, "signature": Base64.urlEncode(signature)]
        )
    }

    /// `POST /v1/confirmations/{id}/decline`.
    public func declineConfirmation(id: String, token: String) async throws -> ConfirmationInfo {
        struct Body: Decodable { var confirmation: ConfirmationInfo }
        let body: Body = try await self.call("POST", "/v1/confirmations/\(Self.pathComponent(id))/decline", token: token)
        return body.confirmation
    }

    static func pathComponent(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_"))) ?? id
    }

    // MARK: Biometric registrations

    public func startRegistration(
        token: String,
        publicKey: DeviceKeyPublicKey,
        deviceId: String,
        deviceName: String?,
        appAttest: AppAttestProof? = nil
    ) async throws -> ChallengeGrant {
        struct Body: Encodable {
            var publicKey: String
            var algorithm: String
            var deviceId: String
            var deviceName: String?
            var appAttest: AppAttestProof?
        }
        return try await self.call(
            "POST",
            "/v1/biometrics/registrations/start",
            token: token,
            encodable: Body(
                publicKey: Self.encodedPublicKey(publicKey),
                algorithm: publicKey.algorithm.rawValue,
                deviceId: deviceId,
                deviceName: deviceName,
                appAttest: appAttest
            )
        )
    }

    /// The public key as `registrations/start` sends it (and as an App Attest proof signs it).
    public static func encodedPublicKey(_ publicKey: DeviceKeyPublicKey) -> String { Base64.urlEncode(publicKey.bytes) }

    // MARK: App PIN

    /// `PUT /v1/biometrics/registrations/{id}/pin`: needs a session from a recent password sign-in.
    public func setPin(token: String, registrationId: String, pin: String) async throws -> BiometricRegistration {
        struct Body: Decodable { var registration: BiometricRegistration }
        let body: Body = try await self.call("PUT", "\(Self.registrationPath(registrationId))/pin", token: token, body: ["pin": pin])
        return body.registration
    }

    /// `DELETE /v1/biometrics/registrations/{id}/pin`.
    public func removePin(token: String, registrationId: String) async throws {
        try await self.callWithoutResult("DELETE", "\(Self.registrationPath(registrationId))/pin", token: token)
    }

    /// `POST /v1/pin/authentications`: a session with `methods: ["pin"]`.
    public func pinAuthentication(registrationId: String, pin: String, sessionDurationMinutes: Int? = nil) async throws
        -> TouchstoneSession
    {
        struct Body: Encodable {
            var registrationId: String
            var pin: String
            var sessionDurationMinutes: Int?
        }
        return try await self.call(
            "POST",
            "/v1/pin/authentications",
            encodable: Body(registrationId: registrationId, pin: pin, sessionDurationMinutes: sessionDurationMinutes)
        )
    }

    /// `/v1/biometrics/registrations/{id}` with the id percent-encoded.
    private static func registrationPath(_ id: String) -> String {
        "/v1/biometrics/registrations/\(id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? id)"
    }

    /// Server error codes with an SDK code of their own; the rest are `.server`.
    static let errorCodes: [String: BiometricLoginError.Code] = [
        "registration_revoked": .registrationRevoked,
        "registration_locked": .registrationLocked,
        "invalid_pin": .pinIncorrect,
        "pin_disabled": .pinDisabled,
        "pin_not_set": .pinNotSet,
        "rate_limited": .rateLimited,
        "login_throttled": .rateLimited,
        "confirmation_expired": .confirmationExpired,
        "confirmation_not_pending": .confirmationNotPending,
        "sign_in_request_expired": .signInRequestExpired,
        "sign_in_request_not_pending": .signInRequestNotPending,
        "wrong_number": .wrongNumber,
        "invalid_device_credential": .deviceCredentialInvalid,
    ]

    // MARK: App Attest

    /// `POST /v1/app-attest/challenges`: a single-use challenge.
    public func appAttestChallenge() async throws -> String {
        struct Body: Decodable { var challenge: String }
        let body: Body = try await self.call("POST", "/v1/app-attest/challenges")
        return body.challenge
    }

    /// `POST /v1/app-attest/keys`: registers an attested key.
    public func registerAppAttestKey(keyId: String, attestation: [UInt8], challenge: String) async throws {
        _ = try await self.exchange(
            "POST",
            "/v1/app-attest/keys",
            token: nil,
            body: ["keyId": keyId, "attestation": Base64.urlEncode(attestation), "challenge": challenge]
        )
    }

    public func finishRegistration(token: String, registrationId: String, signature: [UInt8]) async throws
        -> BiometricRegistration
    {
        try await self.finishEnrolment(token: token, registrationId: registrationId, signature: signature).registration
    }

    /// ``finishRegistration(token:registrationId:signature:)`` with the device credential the server issued (nil from
    /// servers before sign-in approval on the phone), and the phone's proof key when there is one (both keys then
    /// sign `<challenge>.<thumbprint>`).
    public func finishEnrolment(token: String, registrationId: String, signature: [UInt8], proofKey: ProofKeyEnrolment? = nil) async throws
        -> (registration: BiometricRegistration, deviceCredential: String?)
    {
        struct Body: Decodable {
            var registration: BiometricRegistration
            var deviceCredential: String?
        }
        var input: [String: AnyEncodable] = ["registrationId": AnyEncodable(registrationId), "signature": AnyEncodable(Base64.urlEncode(signature))]
        input.merge(proofKey?.fields ?? [:]) { $1 }
        let body: Body = try await self.call("POST", "/v1/biometrics/registrations/finish", token: token, encodable: input)
        return (body.registration, body.deviceCredential)
    }

    public func registrations(token: String) async throws -> [BiometricRegistration] {
        struct Body: Decodable { var registrations: [BiometricRegistration] }
        let body: Body = try await self.call("GET", "/v1/biometrics/registrations", token: token)
        return body.registrations
    }

    public func deleteRegistration(token: String, id: String) async throws {
        try await self.callWithoutResult("DELETE", Self.registrationPath(id), token: token)
    }

    /// Tells the server this device's key is unusable (`reason`: `biometry_changed` or `key_lost`). Needs no session:
    /// the registration id and the device id identify the caller.
    public func invalidateRegistration(id: String, deviceId: String, reason: String) async throws {
        _ = try await self.exchange(
            "POST",
            "\(Self.registrationPath(id))/invalidate",
            token: nil,
            body: ["reason": reason, "deviceId": deviceId]
        )
    }

    // MARK: Biometric authentication

    public func startAuthentication(registrationId: String) async throws -> ChallengeGrant {
        try await self.call("POST", "/v1/biometrics/authentications/start", body: ["registrationId": registrationId])
    }

    public func finishAuthentication(
        registrationId: String,
        challenge: String,
        signature: [UInt8],
        sessionDurationMinutes: Int? = nil
    ) async throws -> TouchstoneSession {
        struct Body: Encodable {
            var registrationId: String
            var challenge: String
            var signature: String
            var sessionDurationMinutes: Int?
        }
        return try await self.call(
            "POST",
            "/v1/biometrics/authentications/finish",
            encodable: Body(
                registrationId: registrationId,
                challenge: challenge,
                signature: Base64.urlEncode(signature),
                sessionDurationMinutes: sessionDurationMinutes
            )
        )
    }

    // MARK: Plumbing

    private struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    func call<Output: Decodable>(
        _ method: String,
        _ path: String,
        token: String? = nil,
        body: [String: String?]? = nil
    ) async throws -> Output {
        try await self.call(method, path, token: token, encodable: body.map { $0.compactMapValues { $0 } })
    }

    func call<Output: Decodable>(
        _ method: String,
        _ path: String,
        token: String? = nil,
        encodable body: (some Encodable)?
    ) async throws -> Output {
        let response = try await self.exchange(method, path, token: token, body: body)
        return try self.decode(Output.self, response, path: path)
    }

    func decode<Output: Decodable>(_ type: Output.Type, _ response: TransportResponse, path: String) throws -> Output {
        do {
            return try JSONDecoder().decode(Output.self, from: response.body)
        } catch {
            throw BiometricLoginError(.transport, "unreadable response from \(path): \(error)", httpStatus: response.status)
        }
    }

    func callWithoutResult(_ method: String, _ path: String, token: String?) async throws {
        _ = try await self.exchange(method, path, token: token, body: String?.none)
    }

    func exchange(_ method: String, _ path: String, token: String?, body: (some Encodable)?) async throws
        -> TransportResponse
    {
        try await self.exchange(method, path, token: token, raw: try body.map { try JSONEncoder().encode($0) })
    }

    func exchange(_ method: String, _ path: String, token: String?, raw data: Data?) async throws -> TransportResponse {
        if let token, let signer = await self.dpop.signer(for: token) {
            return try await self.exchangeBound(method, path, token: token, signer: signer, raw: data)
        }
        return try await self.exchange(method, path, authorization: token.map { "Bearer \($0)" }, raw: data)
    }

    /// Sends a request with any `Authorization` value (a device credential, a poll token), and `extra` headers.
    func exchange(_ method: String, _ path: String, authorization: String?, extra: [String: String] = [:], raw data: Data?) async throws
        -> TransportResponse
    {
        var headers = extra
        headers["Accept"] = "application/json"
        if let authorization { headers["Authorization"] = authorization }
        if data != nil { headers["Content-Type"] = "application/json" }
        let response: TransportResponse
        do {
            response = try await self.transport.send(TransportRequest(method: method, path: path, headers: headers, body: data))
        } catch let error as BiometricLoginError {
            throw error
        } catch {
            throw BiometricLoginError(.transport, "cannot reach the server: \(error.localizedDescription)")
        }
        if let nonce = response.header("DPoP-Nonce") { await self.dpop.remember(nonce: nonce) }
        guard (200..<300).contains(response.status) else {
            if let decoded = try? JSONDecoder().decode(ErrorBody.self, from: response.body) {
                let code = Self.errorCodes[decoded.error.code] ?? .server
                var error = BiometricLoginError(
                    code,
                    decoded.error.message,
                    serverCode: decoded.error.code,
                    httpStatus: response.status
                )
                error.serverDate = response.header("Date").flatMap(Self.httpDate)
                throw error
            }
            throw BiometricLoginError(.transport, "unexpected HTTP \(response.status) from \(path)", httpStatus: response.status)
        }
        return response
    }
}
