public import Foundation
import TouchstoneCrypto

/// Passkeys in the app: the passkey walkthrough's flow — the server's options, the OS sheet, the signed answer back —
/// talking to the same endpoints as the web page and returning the same ``TouchstoneSession``.
///
/// ```swift
/// let passkeys = PasskeyLogin(client: client, authorizer: AuthorizationControllerPasskeyAuthorizer(anchor: { window }))
/// let passkey = try await passkeys.register(session: passwordSession, name: "iPhone")
/// let session = try await passkeys.signIn()                  // username-less: the sheet lists the user's passkeys
/// let session = try await passkeys.signIn(email: email)      // only that account's passkeys
/// let session = try await passkeys.signInWithAutoFill()      // suggestions in the username field (iOS 16+)
/// ```
public actor PasskeyLogin {
    public nonisolated let client: TouchstoneClient
    let authorizer: any PasskeyAuthorizer

    public init(client: TouchstoneClient, authorizer: any PasskeyAuthorizer) {
        self.client = client
        self.authorizer = authorizer
    }

    /// Adds a passkey to the account (the session needs fresh strong authentication: ``reauthenticate(session:)``).
    ///
    /// - Throws: ``PasskeyError``: the sheet's outcomes (`.cancelled`, `.failed`, ...), `.server` (for example
    ///   `reauthentication_required`, `passkey_already_registered`, `invalid_passkey_registration`), `.transport`.
    public func register(session: TouchstoneSession, name: String? = nil) async throws -> PasskeyInfo {
        let optionsJSON = try await self.server { try await self.client.passkeyRegistrationOptions(token: session.session.token) }
        let request = try PasskeyRegistrationRequest(optionsJSON: optionsJSON)
        let result = try await self.authorizer.register(request)
        var response = result.responseJSON
        if let name { response["name"] = name }
        let body = try JSONSerialization.data(withJSONObject: response)
        return try await self.server { try await self.client.verifyPasskeyRegistration(token: session.session.token, responseJSON: body) }
    }

    /// Creates an account with a passkey and no password (the OS sheet makes the passkey, user verification
    /// required); returns the new account's first session.
    ///
    /// - Throws: ``PasskeyError``: the sheet's outcomes, `.server` (`email_taken`, `sign_up_disabled`,
    ///   `invalid_passkey_registration`...), `.transport`.
    public func signUp(email: String, displayName: String? = nil, name: String? = nil) async throws -> TouchstoneSession {
        let optionsJSON = try await self.server { try await self.client.passkeySignUpOptions(email: email, displayName: displayName) }
        let request = try PasskeyRegistrationRequest(optionsJSON: optionsJSON)
        let result = try await self.authorizer.register(request)
        var response = result.responseJSON
        if let name { response["name"] = name }
        let body = try JSONSerialization.data(withJSONObject: response)
        return try await self.server { try await self.client.verifyPasskeySignUp(responseJSON: body) }
    }

    /// Signs in with a passkey: any of the user's (`email` nil, username-less) or one of that account's.
    ///
    /// - Throws: ``PasskeyError``: `.cancelled`, `.noCredentials` (none on this device), `.credentialNotFound` (the
    ///   server no longer knows the passkey the user picked), `.passkeyLocked`, `.server`, `.transport`.
    public func signIn(email: String? = nil) async throws -> TouchstoneSession {
        try await self.signIn(email: email, mode: .modal)
    }

    /// Offers the passkeys in the keyboard's suggestions for a username field (`textContentType = .username`); the
    /// call waits until the user picks one. Cancel the task when the field goes away.
    public func signInWithAutoFill() async throws -> TouchstoneSession {
        try await self.signIn(email: nil, mode: .autoFill)
    }

    private func signIn(email: String?, mode: PasskeyAssertionMode) async throws -> TouchstoneSession {
        let optionsJSON = try await self.server { try await self.client.passkeyAuthenticationOptions(email: email) }
        let request = try PasskeyAssertionRequest(optionsJSON: optionsJSON)
        let result = try await self.authorizer.assert(request, mode: mode)
        let body = try JSONSerialization.data(withJSONObject: result.responseJSON)
        return try await self.server { try await self.client.verifyPasskeyAuthentication(responseJSON: body) }
    }

    /// Proves one of the account's passkeys again in `session` (the OS sheet, user verification required), so
    /// privileged acts are allowed for the server's window; returns the session as it now is (the same token).
    ///
    /// - Throws: ``PasskeyError``: the sheet's outcomes, `.server` (`no_passkeys`, `invalid_passkey_assertion`,
    ///   `challenge_not_found`...), `.transport`.
    public func reauthenticate(session: TouchstoneSession) async throws -> TouchstoneSession {
        let token = session.session.token
        let optionsJSON = try await self.server { try await self.client.reauthenticationPasskeyOptions(token: token) }
        let request = try PasskeyAssertionRequest(optionsJSON: optionsJSON)
        let result = try await self.authorizer.assert(request, mode: .modal)
        let body = try JSONSerialization.data(withJSONObject: result.responseJSON)
        let info = try await self.server { try await self.client.reauthenticate(passkeyAssertionJSON: body, token: token) }
        return TouchstoneSession(user: session.user, session: info)
    }

    /// Runs a server call, reporting its failures as ``PasskeyError``s.
    private func server<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as BiometricLoginError {
            throw PasskeyError(serverError: error)
        }
    }
}

/// How an assertion is asked for.
public enum PasskeyAssertionMode: Sendable, Hashable {
    /// The OS sheet, now.
    case modal
    /// In the keyboard's suggestions of a username field, when the user picks a passkey (iOS 16+).
    case autoFill
}

/// The platform's passkey UI: the Apple adapter uses `ASAuthorizationController`; tests use a virtual authenticator.
public protocol PasskeyAuthorizer: Sendable {
    /// Creates a passkey for the request; throws ``PasskeyError``.
    func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistrationResult
    /// Signs the request's challenge with a passkey the user picks; throws ``PasskeyError``.
    func assert(_ request: PasskeyAssertionRequest, mode: PasskeyAssertionMode) async throws -> PasskeyAssertionResult
}

// MARK: - Requests (from the server's options JSON)

/// What the authenticator needs to create a passkey: the server's `PublicKeyCredentialCreationOptionsJSON`, decoded.
public struct PasskeyRegistrationRequest: Sendable, Hashable {
    public var relyingPartyId: String
    public var relyingPartyName: String
    public var challenge: [UInt8]
    public var userId: [UInt8]
    public var userName: String
    public var userDisplayName: String
    /// COSE algorithm identifiers, in the server's order of preference.
    public var algorithms: [Int]
    /// Passkeys the account already has (the authenticator must not make a second one).
    public var excludeCredentials: [[UInt8]]
    /// `required`, `preferred` or `discouraged`.
    public var userVerification: String
    /// `none`, `indirect`, `direct` or `enterprise`.
    public var attestation: String
    public var timeout: TimeInterval?
    /// The options as the server sent them (for authorizers that take JSON).
    public var optionsJSON: Data

    public init(optionsJSON: Data) throws {
        struct Options: Decodable {
            struct RelyingParty: Decodable {
                var id: String
                var name: String
            }
            struct User: Decodable {
                var id: String
                var name: String
                var displayName: String
            }
            struct Parameter: Decodable {
                var alg: Int
            }
            struct Descriptor: Decodable {
                var id: String
            }
            struct Selection: Decodable {
                var userVerification: String?
            }
            var rp: RelyingParty
            var user: User
            var challenge: String
            var pubKeyCredParams: [Parameter]
            var excludeCredentials: [Descriptor]?
            var authenticatorSelection: Selection?
            var attestation: String?
            var timeout: Double?
        }
        guard let options = try? JSONDecoder().decode(Options.self, from: optionsJSON),
            let challenge = Base64.decode(options.challenge), let userId = Base64.decode(options.user.id)
        else {
            throw PasskeyError(.invalidResponse, "the server's creation options are not readable")
        }
        self.relyingPartyId = options.rp.id
        self.relyingPartyName = options.rp.name
        self.challenge = challenge
        self.userId = userId
        self.userName = options.user.name
        self.userDisplayName = options.user.displayName
        self.algorithms = options.pubKeyCredParams.map(\.alg)
        self.excludeCredentials = (options.excludeCredentials ?? []).compactMap { Base64.decode($0.id) }
        self.userVerification = options.authenticatorSelection?.userVerification ?? "preferred"
        self.attestation = options.attestation ?? "none"
        self.timeout = options.timeout.map { $0 / 1000 }
        self.optionsJSON = optionsJSON
    }
}

/// What the authenticator needs to sign in: the server's `PublicKeyCredentialRequestOptionsJSON`, decoded.
public struct PasskeyAssertionRequest: Sendable, Hashable {
    public var relyingPartyId: String
    public var challenge: [UInt8]
    /// Empty for username-less sign-in and AutoFill: any of the user's passkeys for the relying party.
    public var allowCredentials: [[UInt8]]
    public var userVerification: String
    public var timeout: TimeInterval?
    public var optionsJSON: Data

    public init(optionsJSON: Data) throws {
        struct Options: Decodable {
            struct Descriptor: Decodable {
                var id: String
            }
            var rpId: String
            var challenge: String
            var allowCredentials: [Descriptor]?
            var userVerification: String?
            var timeout: Double?
        }
        guard let options = try? JSONDecoder().decode(Options.self, from: optionsJSON), let challenge = Base64.decode(options.challenge) else {
            throw PasskeyError(.invalidResponse, "the server's request options are not readable")
        }
        self.relyingPartyId = options.rpId
        self.challenge = challenge
        self.allowCredentials = (options.allowCredentials ?? []).compactMap { Base64.decode($0.id) }
        self.userVerification = options.userVerification ?? "preferred"
        self.timeout = options.timeout.map { $0 / 1000 }
        self.optionsJSON = optionsJSON
    }
}

// MARK: - Results (to the server's response JSON)

/// A new passkey, as the authenticator returned it.
public struct PasskeyRegistrationResult: Sendable, Hashable {
    public var credentialId: [UInt8]
    /// The client data the OS made and the authenticator signed (exactly these bytes).
    public var clientDataJSON: [UInt8]
    public var attestationObject: [UInt8]
    /// `platform` or `cross-platform`, when known.
    public var attachment: String?
    public var transports: [String]

    public init(credentialId: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8], attachment: String? = nil, transports: [String] = []) {
        self.credentialId = credentialId
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.attachment = attachment
        self.transports = transports
    }

    /// The `RegistrationResponseJSON` the server verifies (what `credential.toJSON()` gives in a browser).
    public var responseJSON: [String: Any] {
        let id = Base64.urlEncode(self.credentialId)
        var response: [String: Any] = [
            "clientDataJSON": Base64.urlEncode(self.clientDataJSON),
            "attestationObject": Base64.urlEncode(self.attestationObject),
        ]
        if !self.transports.isEmpty { response["transports"] = self.transports }
        var json: [String: Any] = ["id": id, "rawId": id, "type": "public-key", "response": response, "clientExtensionResults": [String: Any]()]
        if let attachment = self.attachment { json["authenticatorAttachment"] = attachment }
        return json
    }
}

/// A signed assertion, as the authenticator returned it.
public struct PasskeyAssertionResult: Sendable, Hashable {
    public var credentialId: [UInt8]
    public var clientDataJSON: [UInt8]
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    /// The account's user handle (always there for a discoverable passkey).
    public var userHandle: [UInt8]?
    public var attachment: String?

    public init(
        credentialId: [UInt8],
        clientDataJSON: [UInt8],
        authenticatorData: [UInt8],
        signature: [UInt8],
        userHandle: [UInt8]?,
        attachment: String? = nil
    ) {
        self.credentialId = credentialId
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
        self.attachment = attachment
    }

    /// The `AuthenticationResponseJSON` the server verifies.
    public var responseJSON: [String: Any] {
        let id = Base64.urlEncode(self.credentialId)
        var response: [String: Any] = [
            "clientDataJSON": Base64.urlEncode(self.clientDataJSON),
            "authenticatorData": Base64.urlEncode(self.authenticatorData),
            "signature": Base64.urlEncode(self.signature),
        ]
        if let userHandle = self.userHandle { response["userHandle"] = Base64.urlEncode(userHandle) }
        var json: [String: Any] = ["id": id, "rawId": id, "type": "public-key", "response": response, "clientExtensionResults": [String: Any]()]
        if let attachment = self.attachment { json["authenticatorAttachment"] = attachment }
        return json
    }
}

// MARK: - Errors

/// Every failure of ``PasskeyLogin``: the OS sheet's outcomes (each `ASAuthorizationError` code has one) and the
/// server's answers.
public struct PasskeyError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The user dismissed the sheet (ASAuthorizationError.canceled).
        case cancelled
        /// No passkey for this relying party on the device or in the user's password manager (an assertion with no
        /// candidates; on iOS also reported as `.canceled` without a sheet for AutoFill and preferImmediatelyAvailable).
        case noCredentials
        /// The authorization failed (ASAuthorizationError.failed), for example the app is not associated with the
        /// relying party's domain (apple-app-site-association).
        case failed
        /// The request was not handled (ASAuthorizationError.notHandled).
        case notHandled
        /// The authenticator or the server answered something unreadable (ASAuthorizationError.invalidResponse).
        case invalidResponse
        /// The request needed the UI, and the app asked for none (ASAuthorizationError.notInteractive).
        case notInteractive
        /// The authenticator already holds a passkey the server listed to exclude (ASAuthorizationError.matchedExcludedCredential).
        case matchedExcludedCredential
        /// Another ASAuthorizationError code, or one this SDK does not know yet (ASAuthorizationError.unknown).
        case unknown
        /// The server does not know the passkey that signed (deleted on the server): remove it from the device's list.
        case credentialNotFound
        /// Too many failed assertions: the server locked this passkey.
        case passkeyLocked
        /// Too many requests; wait and try again.
        case rateLimited
        /// The server answered with an error; see ``serverCode``.
        case server
        /// The server could not be reached.
        case transport
    }

    public let code: Code
    public let message: String
    public let serverCode: String?
    public let httpStatus: Int?

    public init(_ code: Code, _ message: String, serverCode: String? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.serverCode = serverCode
        self.httpStatus = httpStatus
    }

    /// A server or transport failure of ``TouchstoneClient``.
    init(serverError error: BiometricLoginError) {
        let code: Code
        switch (error.code, error.serverCode) {
        case (.transport, _): code = .transport
        case (_, "passkey_not_found"?): code = .credentialNotFound
        case (_, "passkey_locked"?): code = .passkeyLocked
        case (.rateLimited, _): code = .rateLimited
        default: code = .server
        }
        self.init(code, error.message, serverCode: error.serverCode, httpStatus: error.httpStatus)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code && lhs.serverCode == rhs.serverCode }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.code)
        hasher.combine(self.serverCode)
    }

    public var description: String {
        if let serverCode { return "\(self.code.rawValue) (\(serverCode)): \(self.message)" }
        return "\(self.code.rawValue): \(self.message)"
    }
}
