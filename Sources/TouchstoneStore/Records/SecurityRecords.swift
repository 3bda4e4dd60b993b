public import Foundation

/// One security-relevant event: who, what, from where, and how it ended. Never holds a secret.
public struct AuditEventRecord: Sendable, Hashable, Codable {
    public var id: String
    public var occurredAt: Date
    /// What happened, dotted: `password_login`, `registration.locked`, `pin.failed`...
    public var type: String
    /// `success`, `failure` or `info`.
    public var outcome: String
    public var userId: String?
    public var registrationId: String?
    public var passkeyId: String?
    public var clientAddress: String?
    public var userAgent: String?
    /// The error code of a failure, or a short detail.
    public var reason: String?
    /// The webhook events this event gives the app's backend: written to the outbox in the transaction that stores
    /// this event (not a column of the audit trail).
    public var webhooks: [WebhookOutboxEvent] = []
    /// The mails this event sends (a notice to the account's address): queued in the transaction that stores this
    /// event (not a column of the audit trail).
    public var mails: [QueuedMailRecord] = []

    enum CodingKeys: String, CodingKey {
        case id, occurredAt, type, outcome, userId, registrationId, passkeyId, clientAddress, userAgent, reason
    }

    public init(
        id: String,
        occurredAt: Date,
        type: String,
        outcome: String,
        userId: String? = nil,
        registrationId: String? = nil,
        passkeyId: String? = nil,
        clientAddress: String? = nil,
        userAgent: String? = nil,
        reason: String? = nil
    ) {
        self.id = id
        self.occurredAt = occurredAt
        self.type = type
        self.outcome = outcome
        self.userId = userId
        self.registrationId = registrationId
        self.passkeyId = passkeyId
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.reason = reason
    }
}

/// Which audit events to read: newest first, after an optional cursor.
public struct AuditEventQuery: Sendable, Hashable {
    public var userId: String?
    public var type: String?
    /// Only events at or after this time.
    public var since: Date?
    /// Only events before this time.
    public var until: Date?
    /// Continue after this event (the last one of the previous page).
    public var after: AuditCursor?
    public var limit: Int
    /// Oldest first instead of newest first (for exports).
    public var ascending: Bool

    public init(
        userId: String? = nil,
        type: String? = nil,
        since: Date? = nil,
        until: Date? = nil,
        after: AuditCursor? = nil,
        limit: Int = 50,
        ascending: Bool = false
    ) {
        self.userId = userId
        self.type = type
        self.since = since
        self.until = until
        self.after = after
        self.limit = limit
        self.ascending = ascending
    }
}

/// A position in the audit trail: an event's time and id.
public struct AuditCursor: Sendable, Hashable {
    public var occurredAt: Date
    public var id: String

    public init(occurredAt: Date, id: String) {
        self.occurredAt = occurredAt
        self.id = id
    }
}

/// What a PIN sign-in attempt found.
public enum PinAttempt: Sendable, Hashable {
    /// The attempt is counted; verify the PIN against `hash`.
    case verify(hash: String, userId: String)
    /// The registration does not exist or is not active.
    case noRegistration
    /// The registration has no PIN.
    case noPin
    /// Too many wrong PINs: disabled until the user signs in with the password.
    case disabled
}

/// An operator's API key. Only its SHA-256 hash is stored.
public struct AdminKeyRecord: Sendable, Hashable {
    public var id: String
    public var name: String
    public var keyHash: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: String, name: String, keyHash: String, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.name = name
        self.keyHash = keyHash
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// Failed password sign-ins counted against one key (an account's email).
public struct LoginFailures: Sendable, Hashable {
    public var failures: Int64
    public var lastFailureAt: Date

    public init(failures: Int64, lastFailureAt: Date) {
        self.failures = failures
        self.lastFailureAt = lastFailureAt
    }
}

/// Failed credential checks (passwords, PINs) from one client address, and whether it is blocked.
public struct AddressFailures: Sendable, Hashable {
    public var address: String
    /// Failures in the current window.
    public var failures: Int64
    public var lastFailureAt: Date
    /// Until when the address is refused, once its failures reached the limit.
    public var blockedUntil: Date?

    public init(address: String, failures: Int64, lastFailureAt: Date, blockedUntil: Date?) {
        self.address = address
        self.failures = failures
        self.lastFailureAt = lastFailureAt
        self.blockedUntil = blockedUntil
    }
}

/// A key of the token-signing key set. The private key is stored sealed (encrypted) by the server; the store never
/// sees it in the clear.
public struct SigningKeyRecord: Sendable, Hashable {
    /// The JWK thumbprint (RFC 7638) of the public key.
    public var kid: String
    /// 1, 2, 3, ...: the order of creation; a newer generation wins once it is active.
    public var generation: Int64
    /// `ES256` or `EdDSA`.
    public var algorithm: String
    /// The public key as a JWK (JSON text).
    public var publicJWK: String
    /// The private key, sealed with the key-encryption key.
    public var sealedPrivateKey: [UInt8]
    /// When it was created and published.
    public var createdAt: Date
    /// When it starts signing (publication lead time after creation, so caches know it first).
    public var activatesAt: Date

    public init(
        kid: String,
        generation: Int64,
        algorithm: String,
        publicJWK: String,
        sealedPrivateKey: [UInt8],
        createdAt: Date,
        activatesAt: Date
    ) {
        self.kid = kid
        self.generation = generation
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.createdAt = createdAt
        self.activatesAt = activatesAt
    }
}

/// A transaction confirmation: what the user is asked to approve, the exact payload their device signs, and once
/// decided, the decision with the approval's evidence.
public struct ConfirmationRecord: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        case pending
        case approved
        case declined
    }

    /// How an approval was made and what proves it.
    public struct Approval: Sendable, Hashable {
        /// `biometric` or `passkey`.
        public var method: String
        public var registrationId: String?
        public var passkeyId: String?
        public var algorithm: String
        /// base64url: SPKI DER of a device key, or a passkey's COSE key.
        public var publicKey: String
        /// base64url.
        public var signature: String
        public var authenticatorData: String?
        public var clientDataJSON: String?

        public init(
            method: String,
            registrationId: String? = nil,
            passkeyId: String? = nil,
            algorithm: String,
            publicKey: String,
            signature: String,
            authenticatorData: String? = nil,
            clientDataJSON: String? = nil
        ) {
            self.method = method
            self.registrationId = registrationId
            self.passkeyId = passkeyId
            self.algorithm = algorithm
            self.publicKey = publicKey
            self.signature = signature
            self.authenticatorData = authenticatorData
            self.clientDataJSON = clientDataJSON
        }
    }

    public var id: String
    public var userId: String
    public var summary: String
    /// The details in canonical JSON.
    public var details: String
    /// The canonical payload text the device signs.
    public var payload: String
    /// `user` (the user's own session) or `service:<admin key name>`.
    public var createdBy: String
    public var createdAt: Date
    public var expiresAt: Date
    public var status: Status
    public var decidedAt: Date?
    public var approval: Approval?

    public init(
        id: String,
        userId: String,
        summary: String,
        details: String,
        payload: String,
        createdBy: String,
        createdAt: Date,
        expiresAt: Date,
        status: Status = .pending,
        decidedAt: Date? = nil,
        approval: Approval? = nil
    ) {
        self.id = id
        self.userId = userId
        self.summary = summary
        self.details = details
        self.payload = payload
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.status = status
        self.decidedAt = decidedAt
        self.approval = approval
    }
}

/// Audit events of one type, outcome and reason within one time bucket.
public struct AuditEventCount: Sendable, Hashable {
    public var bucketStart: Date
    public var type: String
    public var outcome: String
    public var reason: String?
    public var count: Int64

    public init(bucketStart: Date, type: String, outcome: String, reason: String?, count: Int64) {
        self.bucketStart = bucketStart
        self.type = type
        self.outcome = outcome
        self.reason = reason
        self.count = count
    }
}
