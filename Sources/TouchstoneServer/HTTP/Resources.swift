import Foundation
import Hummingbird
import TouchstoneStore

/// `user` in responses.
struct UserResource: Encodable {
    var id: String
    var email: String
    var displayName: String?
    var createdAt: String
    /// Whether the user proved the address is theirs (a mailed code or link, issue #33).
    var emailVerified: Bool
    /// Whether the account has a password (issue #42: it may have only passkeys and device keys).
    var hasPassword: Bool

    init(_ user: UserRecord) {
        self.id = user.id
        self.email = user.email
        self.displayName = user.displayName
        self.createdAt = user.createdAt.rfc3339
        self.emailVerified = user.emailVerifiedAt != nil
        self.hasPassword = user.passwordHash != nil
    }

    enum CodingKeys: CodingKey { case id, email, displayName, createdAt, emailVerified, hasPassword }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.email, forKey: .email)
        try container.encode(self.displayName, forKey: .displayName)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.emailVerified, forKey: .emailVerified)
        try container.encode(self.hasPassword, forKey: .hasPassword)
    }
}

/// `session` in responses. The token is shown to the holder of the session only.
struct SessionResource: Encodable {
    var token: String
    var expiresAt: String
    var idleExpiresAt: String
    var authenticatedAt: String
    var methods: [String]

    init(token: String, record: SessionRecord) {
        self.token = token
        self.expiresAt = record.expiresAt.rfc3339
        self.idleExpiresAt = record.idleExpiresAt.rfc3339
        self.authenticatedAt = record.authenticatedAt.rfc3339
        self.methods = record.methods.map(\.rawValue)
    }
}

/// `registration` in responses.
struct RegistrationResource: Encodable {
    var id: String
    var userId: String
    var deviceId: String
    var deviceName: String?
    var algorithm: String
    var status: String
    var createdAt: String
    var lastUsedAt: String?
    /// Whether an App Attest assertion vouched for the enrolling app.
    var appAttested: Bool
    /// What the Android Keystore attestation of the key established (null: not attested).
    var keyAttestation: KeyAttestation?
    /// `none`, `set` or `disabled` (too many wrong PINs; a password sign-in re-enables it).
    var pin: String
    /// The RFC 7638 thumbprint of the phone's DPoP proof key (issue #43): sessions of this registration's sign-ins are
    /// bound to it. Null: none.
    var proofKeyThumbprint: String?

    init(_ record: RegistrationRecord) {
        self.appAttested = record.appAttestKeyId != nil
        self.keyAttestation = record.keyAttestation.map { KeyAttestation(securityLevel: $0.securityLevel, packageName: $0.packageName) }
        self.pin = record.pinSetAt == nil ? "none" : (record.pinDisabledAt == nil ? "set" : "disabled")
        self.id = record.id
        self.userId = record.userId
        self.deviceId = record.deviceId
        self.deviceName = record.deviceName
        self.algorithm = record.algorithm
        self.status = record.status.rawValue
        self.createdAt = record.createdAt.rfc3339
        self.lastUsedAt = record.lastUsedAt?.rfc3339
        self.proofKeyThumbprint = record.proofKeyThumbprint
    }

    /// `keyAttestation` of a registration: `{"platform": "android", "securityLevel": "tee" | "strongbox", "packageName"}`.
    struct KeyAttestation: Encodable {
        var platform = "android"
        var securityLevel: String
        var packageName: String
    }

    enum CodingKeys: CodingKey {
        case id, userId, deviceId, deviceName, algorithm, status, createdAt, lastUsedAt, appAttested, keyAttestation, pin, proofKeyThumbprint
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.userId, forKey: .userId)
        try container.encode(self.deviceId, forKey: .deviceId)
        try container.encode(self.deviceName, forKey: .deviceName)
        try container.encode(self.algorithm, forKey: .algorithm)
        try container.encode(self.status, forKey: .status)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.lastUsedAt, forKey: .lastUsedAt)
        try container.encode(self.proofKeyThumbprint, forKey: .proofKeyThumbprint)
        try container.encode(self.appAttested, forKey: .appAttested)
        try container.encode(self.keyAttestation, forKey: .keyAttestation)
        try container.encode(self.pin, forKey: .pin)
    }
}

/// `event` in responses: an audit event.
struct AuditEventResource: Encodable {
    var id: String
    var occurredAt: String
    var type: String
    var outcome: String
    var userId: String?
    var registrationId: String?
    var passkeyId: String?
    var clientAddress: String?
    var userAgent: String?
    var reason: String?

    init(_ event: AuditEventRecord) {
        self.id = event.id
        self.occurredAt = event.occurredAt.rfc3339
        self.type = event.type
        self.outcome = event.outcome
        self.userId = event.userId
        self.registrationId = event.registrationId
        self.passkeyId = event.passkeyId
        self.clientAddress = event.clientAddress
        self.userAgent = event.userAgent
        self.reason = event.reason
    }
}

/// `{"events": [...], "nextCursor": "..."}`: a page of the audit trail, newest first.
struct AuditEventPage: Encodable {
    var events: [AuditEventResource]
    /// Pass as `cursor` for the next page; absent on the last page.
    var nextCursor: String?
}

/// `{"user","session"}`: the answer to every successful sign-in.
struct SignedIn: Encodable {
    var user: UserResource
    var session: SessionResource
}

/// `{"registrationId","challenge","expiresAt"}`: the answer to both ceremony starts.
struct ChallengeResponse: Encodable {
    var registrationId: String
    var challenge: String
    var expiresAt: String
}

/// Encodes any `Encodable` as a JSON response with a chosen status.
struct JSONResponse<Body: Encodable>: ResponseGenerator {
    var status: HTTPResponse.Status = .ok
    var body: Body
    /// Headers besides `Content-Type`.
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status = .ok, _ body: Body, headers: HTTPFields = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let buffer: ByteBuffer
        if let writable = self.body as? any JSONWritable {
            var writer = JSONWriter()
            writable.writeJSON(to: &writer)
            buffer = writer.buffer
        } else {
            buffer = ByteBuffer(bytes: try JSONEncoder().encode(self.body))
        }
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: self.status, headers: headers, body: .init(byteBuffer: buffer))
    }
}
