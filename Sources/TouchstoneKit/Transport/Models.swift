public import Foundation
import TouchstoneCrypto

/// `user` as the server returns it.
public struct TouchstoneUser: Sendable, Hashable, Codable {
    public var id: String
    public var email: String
    public var displayName: String?
    public var createdAt: String
    /// Whether a mailed code or link proved the address (absent from older servers).
    public var emailVerified: Bool?
    /// Whether the account has a password; it may have only passkeys and device keys (absent from older servers).
    public var hasPassword: Bool?
}

/// `session` as the server returns it.
public struct TouchstoneSessionInfo: Sendable, Hashable, Codable {
    /// The bearer token. Keep it in memory or in the Keychain, never in plain storage.
    public var token: String
    public var expiresAt: String
    public var idleExpiresAt: String
    public var authenticatedAt: String
    /// How the session was opened: `password`, `biometric`, `passkey`, `pin`, `email_code`, `recovery_code` or `phone_approval`.
    public var methods: [String]
}

/// A signed-in user: what sign-up, password sign-in and biometric login return.
public struct TouchstoneSession: Sendable, Hashable, Codable {
    public var user: TouchstoneUser
    public var session: TouchstoneSessionInfo

    public init(user: TouchstoneUser, session: TouchstoneSessionInfo) {
        self.user = user
        self.session = session
    }
}

/// A biometric registration (one device key of a user).
public struct BiometricRegistration: Sendable, Hashable, Codable {
    public var id: String
    public var userId: String
    public var deviceId: String
    public var deviceName: String?
    public var algorithm: String
    /// `active`, `revoked`, `replaced` or `invalidated`.
    public var status: String
    public var createdAt: String
    public var lastUsedAt: String?
    /// Whether an App Attest assertion vouched for the enrolling app (absent from older servers).
    public var appAttested: Bool?
    /// The app PIN: `none`, `set` or `disabled` (absent from older servers).
    public var pin: String?
    /// The thumbprint of the phone's DPoP proof key the registration's sessions are bound to (nil: none).
    public var proofKeyThumbprint: String?
}

/// A challenge to sign.
public struct ChallengeGrant: Sendable, Hashable, Codable {
    public var registrationId: String
    public var challenge: String
    public var expiresAt: String
}

/// What the server allows, from `GET /v1/config`.
public struct ServerConfiguration: Sendable, Hashable, Codable {
    public struct Biometrics: Sendable, Hashable, Codable {
        public var enabled: Bool
        public var devicePolicy: String
        public var algorithms: [String]
        public var challengeTTLSeconds: Int
    }
    public var biometrics: Biometrics
}

/// A passkey as the server lists it.
public struct PasskeyInfo: Sendable, Hashable, Codable {
    public var id: String
    public var name: String?
    public var aaguid: String
    public var backupEligible: Bool
    public var backedUp: Bool
    public var createdAt: String
    public var lastUsedAt: String?
}

/// The `appAttest` object of `registrations/start`: an App Attest assertion vouching for the enrolment.
public struct AppAttestProof: Sendable, Hashable, Codable {
    public var keyId: String
    public var challenge: String
    /// Base64 of the assertion when encoded.
    public var assertion: [UInt8]

    public init(keyId: String, challenge: String, assertion: [UInt8]) {
        self.keyId = keyId
        self.challenge = challenge
        self.assertion = assertion
    }

    enum CodingKeys: CodingKey { case keyId, challenge, assertion }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.keyId = try container.decode(String.self, forKey: .keyId)
        self.challenge = try container.decode(String.self, forKey: .challenge)
        guard let assertion = Base64.decode(try container.decode(String.self, forKey: .assertion)) else {
            throw DecodingError.dataCorruptedError(forKey: .assertion, in: container, debugDescription: "not base64")
        }
        self.assertion = assertion
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.keyId, forKey: .keyId)
        try container.encode(self.challenge, forKey: .challenge)
        try container.encode(Base64.urlEncode(self.assertion), forKey: .assertion)
    }
}

/// A confirmation as the server reports it.
public struct ConfirmationInfo: Sendable, Hashable, Codable {
    public var id: String
    /// `pending`, `approved`, `declined` or `expired`.
    public var status: String
    public var summary: String
    public var createdAt: String
    public var expiresAt: String
    public var approvedAt: String?
    public var declinedAt: String?
    /// `biometric` or `passkey`, once approved.
    public var method: String?
    public var registrationId: String?
}

/// An approved confirmation and its receipt (a `confirmation+jwt` the app's backend verifies with the JWKS).
public struct ApprovedConfirmation: Sendable, Hashable, Codable {
    public var confirmation: ConfirmationInfo
    public var receipt: String
}

/// What the app asks the user to approve: the confirmation's id and summary as the app got them, and the payload the
/// server made (the text the device signs).
public struct ConfirmationRequest: Sendable, Hashable {
    public var id: String
    public var summary: String
    public var payload: String

    public init(id: String, summary: String, payload: String) {
        self.id = id
        self.summary = summary
        self.payload = payload
    }
}

/// What a password reset did (`POST /v1/password-resets/confirm`).
public struct PasswordReset: Sendable, Hashable, Codable {
    public var user: TouchstoneUser
    /// How many sessions of the account ended (all of them).
    public var revokedSessions: Int
    /// A new session, unless the account has passkeys or device keys: then its user signs in again.
    public var session: TouchstoneSessionInfo?

    /// The new session with its user, when the reset opened one.
    public var signedIn: TouchstoneSession? { self.session.map { TouchstoneSession(user: self.user, session: $0) } }
}
