public import Foundation

/// A request to sign in somewhere (a browser, or a client's backend through OpenID CIBA) that the user approves on
/// their phone with a device key (issue #34).
public struct SignInRequestRecord: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// A browser asked (`POST /v1/sign-in-requests`): number matching.
        case signIn = "sign_in"
        /// A client's backend asked (`POST /oauth2/bc-authorize`): a binding message instead of a number.
        case backchannel
    }

    public enum Status: String, Sendable, Hashable {
        case pending
        case approved
        case declined
    }

    public var id: String
    public var kind: Kind
    /// The normalised address the browser named (nil: none; the request is bound by the first phone that scans it).
    public var email: String?
    /// The account whose phones see the request; nil when the address has no account (no phone ever sees it) or no
    /// phone has scanned it yet.
    public var userId: String?
    /// The OpenID client that asked, if any.
    public var clientId: String?
    /// What the phone shows as the requester: the client's name, or the product's.
    public var clientName: String
    /// CIBA's `binding_message`.
    public var bindingMessage: String?
    /// CIBA's granted scopes, space-separated.
    public var scope: String?
    /// SHA-256 (hex) of the browser's poll token, or of CIBA's `auth_req_id`.
    public var pollTokenHash: String
    /// SHA-256 (hex) of the QR code's secret (nil for CIBA).
    public var secretHash: String?
    /// The number the browser shows (nil for CIBA).
    public var number: Int?
    /// The numbers the phone offers, the right one among them, in the order shown (empty for CIBA).
    public var choices: [Int]
    public var browserAddress: String?
    public var browserUserAgent: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var status: Status
    public var decidedAt: Date?
    /// The registration whose key decided.
    public var registrationId: String?
    /// `not_me`, `cancel` or `wrong_number` for a decline.
    public var reason: String?
    /// Base64url of the device key's signature over the decision.
    public var signature: String?
    /// When an approval was turned into a session or tokens (once).
    public var redeemedAt: Date?
    /// When a CIBA client last polled (for `slow_down`).
    public var lastPolledAt: Date?

    public init(
        id: String,
        kind: Kind,
        email: String?,
        userId: String?,
        clientId: String?,
        clientName: String,
        bindingMessage: String? = nil,
        scope: String? = nil,
        pollTokenHash: String,
        secretHash: String?,
        number: Int?,
        choices: [Int],
        browserAddress: String?,
        browserUserAgent: String?,
        createdAt: Date,
        expiresAt: Date,
        status: Status = .pending
    ) {
        self.id = id
        self.kind = kind
        self.email = email
        self.userId = userId
        self.clientId = clientId
        self.clientName = clientName
        self.bindingMessage = bindingMessage
        self.scope = scope
        self.pollTokenHash = pollTokenHash
        self.secretHash = secretHash
        self.number = number
        self.choices = choices
        self.browserAddress = browserAddress
        self.browserUserAgent = browserUserAgent
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.status = status
    }
}

/// A phone's decision on a sign-in request.
public struct SignInRequestDecision: Sendable, Hashable {
    public var status: SignInRequestRecord.Status
    public var registrationId: String
    public var reason: String?
    public var signature: String

    public init(status: SignInRequestRecord.Status, registrationId: String, reason: String?, signature: String) {
        self.status = status
        self.registrationId = registrationId
        self.reason = reason
        self.signature = signature
    }
}

/// What a device-key registration uses to read sign-in requests without a biometric prompt (the device credential)
/// and where to push them.
public struct DeviceChannelRecord: Sendable, Hashable {
    public var registrationId: String
    /// SHA-256 (hex) of the device credential; the credential itself is never stored.
    public var credentialHash: String
    public var createdAt: Date
    /// `apns` (nil: no push token).
    public var pushPlatform: String?
    /// The push token (an APNs device token, hex).
    public var pushToken: String?

    public init(registrationId: String, credentialHash: String, createdAt: Date, pushPlatform: String? = nil, pushToken: String? = nil) {
        self.registrationId = registrationId
        self.credentialHash = credentialHash
        self.createdAt = createdAt
        self.pushPlatform = pushPlatform
        self.pushToken = pushToken
    }
}
