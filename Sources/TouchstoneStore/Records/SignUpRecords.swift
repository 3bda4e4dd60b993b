public import Foundation

/// A sign-up without a password that has been started and not finished (issue #42): the account it will create, bound
/// to the challenge its credential must answer. Single use: finishing (or failing) consumes it.
public struct PendingSignUpRecord: Sendable, Hashable {
    /// `passkey` or `device_key`.
    public enum Kind: String, Sendable, Hashable {
        case passkey
        case deviceKey = "device_key"
    }

    /// The key: a passkey sign-up's WebAuthn challenge, or a device-key sign-up's id.
    public var id: String
    public var kind: Kind
    /// The new account's id (a passkey's user handle is made from it).
    public var userId: String
    /// Normalised, as sign-up stores it.
    public var email: String
    public var displayName: String?
    /// What the finish needs besides (a device key's public key, algorithm, device and challenge), as JSON; nil for a
    /// passkey sign-up.
    public var details: String?
    public var createdAt: Date
    public var expiresAt: Date

    public init(
        id: String,
        kind: Kind,
        userId: String,
        email: String,
        displayName: String?,
        details: String? = nil,
        createdAt: Date,
        expiresAt: Date
    ) {
        self.id = id
        self.kind = kind
        self.userId = userId
        self.email = email
        self.displayName = displayName
        self.details = details
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
