public import Foundation

/// `user` as the server returns it.
public struct TouchstoneUser: Sendable, Hashable, Codable {
    public var id: String
    public var email: String
    public var displayName: String?
    public var createdAt: String
}

/// `session` as the server returns it.
public struct TouchstoneSessionInfo: Sendable, Hashable, Codable {
    /// The bearer token. Keep it in memory or in the Keychain, never in plain storage.
    public var token: String
    public var expiresAt: String
    public var idleExpiresAt: String
    public var authenticatedAt: String
    /// `password` or `biometric`.
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
    /// `active`, `revoked` or `replaced`.
    public var status: String
    public var createdAt: String
    public var lastUsedAt: String?
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
