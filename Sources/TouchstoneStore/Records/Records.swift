public import Foundation

/// A user account.
public struct UserRecord: Sendable, Hashable {
    public var id: String
    /// The normalised (lowercased, trimmed) email address; unique.
    public var email: String
    public var displayName: String?
    /// A bcrypt hash; never the password. `nil`: the account has no password (issue #42; stored as the empty string,
    /// which no hash is, as the column is older than optional passwords).
    public var passwordHash: String?
    public var createdAt: Date
    /// Passkeys of this account must be device-bound (not backup eligible): synced ones are refused at registration
    /// and at sign-in.
    public var requireDeviceBoundPasskeys = false
    /// When the user proved the address is theirs (a mailed code or link), if ever; a new address starts unverified.
    public var emailVerifiedAt: Date?

    public init(id: String, email: String, displayName: String?, passwordHash: String?, createdAt: Date) {
        self.id = id
        self.email = email
        self.displayName = displayName
        self.passwordHash = passwordHash
        self.createdAt = createdAt
    }
}

/// What an account can sign in with, read in the unit of work that changes it (``UserStore/credentials(userId:)``).
public struct CredentialSummary: Sendable, Hashable {
    public var hasPassword: Bool
    /// Passkeys that are not locked.
    public var usablePasskeyIds: [String]
    /// Device keys whose registration is active.
    public var activeRegistrationIds: [String]

    public init(hasPassword: Bool, usablePasskeyIds: [String], activeRegistrationIds: [String]) {
        self.hasPassword = hasPassword
        self.usablePasskeyIds = usablePasskeyIds
        self.activeRegistrationIds = activeRegistrationIds
    }

    /// Whether the account would keep a way to sign in other than by mail without `passkeyId` and `registrationId`.
    public func keepsACredential(withoutPasskey passkeyId: String? = nil, withoutRegistration registrationId: String? = nil) -> Bool {
        self.hasPassword || self.usablePasskeyIds.contains { $0 != passkeyId } || self.activeRegistrationIds.contains { $0 != registrationId }
    }
}

/// How a session was authenticated.
public enum AuthenticationMethod: String, Sendable, Hashable, Codable, CaseIterable {
    case password
    case biometric
    case passkey
    /// The app PIN of a registration: a fallback, never enough for privileged operations.
    case pin
    /// A 6-digit code mailed to the account's address (issue #33): like a PIN, never enough for privileged operations.
    case emailCode = "email_code"
    /// One of the account's recovery codes (issue #33): enough to enrol one new device or passkey, nothing else
    /// privileged.
    case recoveryCode = "recovery_code"
    /// A sign-in approved on the user's phone with a device key (issue #34): like a biometric sign-in.
    case phoneApproval = "phone_approval"
}

/// A session. Only the SHA-256 hash of its bearer token is stored.
public struct SessionRecord: Sendable, Hashable {
    public var tokenHash: String
    public var userId: String
    public var createdAt: Date
    /// The absolute end of the session.
    public var expiresAt: Date
    /// The session ends here unless it is used before; each use moves it forward, never past ``expiresAt``.
    public var idleExpiresAt: Date
    public var authenticatedAt: Date
    /// When a strong proof (a password, a passkey with user verification, a device key) was last made in this session,
    /// if ever; privileged operations require it to be recent (issue #42). A PIN, a mailed code or a recovery code is
    /// never one.
    public var strongAuthenticatedAt: Date?
    public var methods: [AuthenticationMethod]
    /// The biometric registration that created this session, if any.
    public var registrationId: String?
    public var revokedAt: Date?
    /// A stable, non-secret identifier (access tokens carry it as `sid`); `nil` for sessions from before it existed
    /// until one is assigned.
    public var id: String?
    /// After a passkey sign-in, the OpenID EAP ACR value it met: `phrh` (a device-bound passkey, not backup eligible)
    /// or `phr` (a synced passkey); nil for other methods.
    public var acr: String?
    /// The client address the session was opened from (issue #42: the user's list of sessions); nil for sessions
    /// opened before it was kept, or outside a request.
    public var clientAddress: String?
    /// The `User-Agent` the session was opened with, cut to 200 characters.
    public var userAgent: String?
    /// When the session was last used, to the idle deadline's step (a minute); nil for sessions from before it was kept.
    public var lastSeenAt: Date?
    /// The thumbprint of the DPoP key the session is bound to (issue #43): a phone's own sign-in (device key or PIN)
    /// with a registration that has a proof key. Not stored with the session: ``SessionStore/session(tokenHash:)``
    /// reads it from the registration. A bound session is used only with DPoP proofs from that key.
    public var dpopThumbprint: String?

    public init(
        tokenHash: String,
        userId: String,
        createdAt: Date,
        expiresAt: Date,
        idleExpiresAt: Date,
        authenticatedAt: Date,
        strongAuthenticatedAt: Date?,
        methods: [AuthenticationMethod],
        registrationId: String? = nil,
        revokedAt: Date? = nil,
        id: String? = nil,
        acr: String? = nil,
        clientAddress: String? = nil,
        userAgent: String? = nil,
        lastSeenAt: Date? = nil
    ) {
        self.id = id
        self.acr = acr
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.lastSeenAt = lastSeenAt
        self.tokenHash = tokenHash
        self.userId = userId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.idleExpiresAt = idleExpiresAt
        self.authenticatedAt = authenticatedAt
        self.strongAuthenticatedAt = strongAuthenticatedAt
        self.methods = methods
        self.registrationId = registrationId
        self.revokedAt = revokedAt
    }
}

/// The life cycle of a biometric registration.
public enum RegistrationStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Started, waiting for proof of possession; never shown to clients.
    case pending
    case active
    /// Deleted by the user or revoked by an operator.
    case revoked
    /// Superseded by a newer registration (same device again, or single-device policy).
    case replaced
    /// Its key became unusable on the device (biometric enrolment changed, key lost); reported by the device.
    case invalidated
    /// Too many consecutive failed signatures; its owner unlocks it after a password sign-in.
    case locked
}

/// A device key registered for biometric login.
public struct RegistrationRecord: Sendable, Hashable {
    public var id: String
    public var userId: String
    public var deviceId: String
    public var deviceName: String?
    /// The JOSE algorithm name (`ES256`, `EdDSA`, `RS256`).
    public var algorithm: String
    /// The canonical SubjectPublicKeyInfo DER of the key.
    public var publicKey: [UInt8]
    /// Lowercase hex SHA-256 of ``publicKey``.
    public var keyFingerprint: String
    public var status: RegistrationStatus
    public var createdAt: Date
    public var lastUsedAt: Date?
    public var statusChangedAt: Date?
    /// The App Attest key that vouched for the enrolling app (nil: not attested).
    public var appAttestKeyId: String?
    /// The Android Keystore attestation of the key (nil: not attested).
    public var keyAttestation: KeyAttestationRecord?
    /// Consecutive failed signatures since the last success (reset by a success or an unlock).
    public var failedAttempts: Int64 = 0
    /// When the app PIN was set (nil: no PIN).
    public var pinSetAt: Date?
    /// When three wrong PINs disabled it (until the next password sign-in).
    public var pinDisabledAt: Date?
    /// The RFC 7638 thumbprint of the phone's DPoP proof key (issue #43): sessions of this registration's sign-ins are
    /// bound to it. Never the same on two registrations.
    public var proofKeyThumbprint: String?

    public init(
        id: String,
        userId: String,
        deviceId: String,
        deviceName: String?,
        algorithm: String,
        publicKey: [UInt8],
        keyFingerprint: String,
        status: RegistrationStatus,
        createdAt: Date,
        lastUsedAt: Date? = nil,
        statusChangedAt: Date? = nil,
        appAttestKeyId: String? = nil,
        keyAttestation: KeyAttestationRecord? = nil
    ) {
        self.appAttestKeyId = appAttestKeyId
        self.keyAttestation = keyAttestation
        self.id = id
        self.userId = userId
        self.deviceId = deviceId
        self.deviceName = deviceName
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.keyFingerprint = keyFingerprint
        self.status = status
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.statusChangedAt = statusChangedAt
    }
}

/// What a challenge may be used for; a challenge issued for one purpose is useless for the other.
public enum ChallengePurpose: String, Sendable, Hashable, Codable {
    case registration
    case authentication
    /// An App Attest attestation or assertion.
    case appAttest = "app_attest"
    /// The attestation challenge of an Android Keystore key about to be enrolled.
    case androidKeyAttestation = "android_key_attestation"
}

/// What an Android Keystore attestation established about an enrolled key.
public struct KeyAttestationRecord: Sendable, Hashable {
    /// `tee` or `strongbox`.
    public var securityLevel: String
    /// The app that made the key.
    public var packageName: String

    public init(securityLevel: String, packageName: String) {
        self.securityLevel = securityLevel
        self.packageName = packageName
    }
}

/// An App Attest key: a Secure Enclave key of a genuine device, made by the app, attested by Apple.
public struct AppAttestKeyRecord: Sendable, Hashable {
    /// Base64url of the key id (SHA-256 of the public key).
    public var keyId: String
    /// The P-256 public key, X9.63 uncompressed.
    public var publicKey: [UInt8]
    public var appId: String
    /// `production` or `development`.
    public var environment: String
    /// The counter of the last accepted assertion (0 after attestation).
    public var counter: Int64
    /// Apple's receipt, for fraud-metric requests.
    public var receipt: [UInt8]
    public var createdAt: Date
    public var lastUsedAt: Date?

    public init(
        keyId: String,
        publicKey: [UInt8],
        appId: String,
        environment: String,
        counter: Int64,
        receipt: [UInt8],
        createdAt: Date,
        lastUsedAt: Date? = nil
    ) {
        self.keyId = keyId
        self.publicKey = publicKey
        self.appId = appId
        self.environment = environment
        self.counter = counter
        self.receipt = receipt
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A single-use challenge.
///
/// The value is stored as issued: it is not a credential (using it needs a signature by the registered key), and the
/// registration ceremony must verify a signature over it without the client sending it back.
public struct ChallengeRecord: Sendable, Hashable {
    public var challenge: String
    public var registrationId: String
    public var purpose: ChallengePurpose
    public var createdAt: Date
    public var expiresAt: Date
    public var consumedAt: Date?

    public init(
        challenge: String,
        registrationId: String,
        purpose: ChallengePurpose,
        createdAt: Date,
        expiresAt: Date,
        consumedAt: Date? = nil
    ) {
        self.challenge = challenge
        self.registrationId = registrationId
        self.purpose = purpose
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
    }
}

/// A biometric sign-in attempt's reads: the registration, its user (`nil` only if the account vanished) and whether the
/// attempt's challenge has been answered already (a challenge is stored when it is answered).
public struct SignInAttemptRecord: Sendable, Hashable {
    public var registration: RegistrationRecord
    public var user: UserRecord?
    public var challengeUsed: Bool

    public init(registration: RegistrationRecord, user: UserRecord?, challengeUsed: Bool) {
        self.registration = registration
        self.user = user
        self.challengeUsed = challengeUsed
    }
}

/// What a biometric sign-in's start reads of its registration: its status, and the user and key its finish verifies
/// with (neither ever changes for a registration).
public struct SignInRegistrationRecord: Sendable, Hashable {
    public var id: String
    public var userId: String
    public var status: RegistrationStatus
    public var algorithm: String
    public var publicKey: [UInt8]

    public init(id: String, userId: String, status: RegistrationStatus, algorithm: String, publicKey: [UInt8]) {
        self.id = id
        self.userId = userId
        self.status = status
        self.algorithm = algorithm
        self.publicKey = publicKey
    }
}

/// Which other registrations a newly activated registration supersedes.
public enum ReplacementScope: Sendable, Hashable {
    /// Other active registrations of the same user on the same device (multi-device policy).
    case sameDevice
    /// Every other active registration of the user (single-device policy).
    case allOfUser
}

/// What purging expired data removed.
public struct PurgeResult: Sendable, Hashable {
    /// Biometric and WebAuthn challenges.
    public var challenges: Int
    public var sessions: Int
    public var pendingRegistrations: Int

    public init(challenges: Int, sessions: Int, pendingRegistrations: Int) {
        self.challenges = challenges
        self.sessions = sessions
        self.pendingRegistrations = pendingRegistrations
    }
}

/// A passkey (WebAuthn credential) registered to a user.
public struct PasskeyRecord: Sendable, Hashable {
    /// Touchstone's identifier for the passkey (used in URLs).
    public var id: String
    /// The WebAuthn credential id, base64url.
    public var credentialId: String
    public var userId: String
    public var name: String?
    /// The COSE_Key CBOR of the public key.
    public var publicKey: [UInt8]
    /// The COSE algorithm identifier.
    public var algorithm: Int
    public var signCount: Int64
    /// The authenticator's AAGUID as a lowercase UUID string.
    public var aaguid: String
    public var backupEligible: Bool
    public var backedUp: Bool
    public var attestationFormat: String
    public var attestationType: String
    /// How many assertions came with a counter that did not increase.
    public var cloneWarnings: Int64
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// Consecutive failed assertions since the last success (reset by a success or an unlock).
    public var failedAttempts: Int64 = 0
    /// When too many failed assertions locked the passkey (nil: not locked).
    public var lockedAt: Date?
    /// How the passkey was made: `modal` (the browser's dialog) or `conditional` (an automatic upgrade).
    public var createdVia = "modal"
    /// The attestation certificate's key identifier (lowercase hex SHA-1 of its key), for certificate-based
    /// attestation: how authenticator metadata names U2F authenticators.
    public var attestationKeyId: String?

    public init(
        id: String,
        credentialId: String,
        userId: String,
        name: String?,
        publicKey: [UInt8],
        algorithm: Int,
        signCount: Int64,
        aaguid: String,
        backupEligible: Bool,
        backedUp: Bool,
        attestationFormat: String,
        attestationType: String,
        cloneWarnings: Int64 = 0,
        createdAt: Date,
        lastUsedAt: Date? = nil
    ) {
        self.id = id
        self.credentialId = credentialId
        self.userId = userId
        self.name = name
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.aaguid = aaguid
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.attestationFormat = attestationFormat
        self.attestationType = attestationType
        self.cloneWarnings = cloneWarnings
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A passkey sign-in attempt's reads: the passkey, its user (`nil` only if the account vanished) and whether the
/// attempt's challenge has been answered already (a sign-in challenge is stored when it is answered).
public struct PasskeySignInAttemptRecord: Sendable, Hashable {
    public var passkey: PasskeyRecord
    public var user: UserRecord?
    public var challengeUsed: Bool

    public init(passkey: PasskeyRecord, user: UserRecord?, challengeUsed: Bool) {
        self.passkey = passkey
        self.user = user
        self.challengeUsed = challengeUsed
    }
}

/// A WebAuthn ceremony challenge (passkey registration or sign-in).
public struct WebAuthnChallengeRecord: Sendable, Hashable {
    /// The challenge, base64url (as it appears in clientDataJSON).
    public var challenge: String
    public var purpose: ChallengePurpose
    /// The user the ceremony is for: always for registration; for sign-in only when an email was given.
    public var userId: String?
    /// The credential ids offered in `allowCredentials` (base64url), empty for discoverable sign-in.
    public var allowCredentials: [String]
    public var createdAt: Date
    public var expiresAt: Date

    public init(
        challenge: String,
        purpose: ChallengePurpose,
        userId: String?,
        allowCredentials: [String],
        createdAt: Date,
        expiresAt: Date
    ) {
        self.challenge = challenge
        self.purpose = purpose
        self.userId = userId
        self.allowCredentials = allowCredentials
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// The authenticator metadata BLOB every instance uses (FIDO Metadata Service).
public struct MetadataBLOBRecord: Sendable, Hashable {
    /// The BLOB's serial number (`no`).
    public var number: Int64
    public var nextUpdate: Date
    /// The JWS as verified.
    public var blob: String
    /// Where it came from (a file path or a URL).
    public var source: String
    public var storedAt: Date

    public init(number: Int64, nextUpdate: Date, blob: String, source: String, storedAt: Date) {
        self.number = number
        self.nextUpdate = nextUpdate
        self.blob = blob
        self.source = source
        self.storedAt = storedAt
    }
}
