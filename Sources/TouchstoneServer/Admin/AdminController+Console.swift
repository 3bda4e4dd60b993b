import Foundation
import Hummingbird
import TouchstoneStore

/// What the admin console needs beyond the operator's API: activity counted by time bucket, a user's live sessions,
/// and unlocking a locked registration or passkey for its user.
extension AdminController {
    func addConsoleRoutes(to admin: RouterGroup<Context>) {
        admin.get("/stats", use: self.stats)
        admin.get("/users/:id/sessions", use: self.sessions)
        admin.post("/registrations/:id/unlock", use: self.unlockRegistration)
        admin.post("/passkeys/:id/unlock", use: self.unlockPasskey)
        admin.patch("/users/:id", use: self.changeUser)
    }

    struct UserPatch: Decodable {
        var requireDeviceBoundPasskeys: Bool

        enum CodingKeys: CodingKey { case requireDeviceBoundPasskeys }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.requireDeviceBoundPasskeys = try container.decode(Bool.self, forKey: .requireDeviceBoundPasskeys)
        }
    }

    /// `PATCH /v1/admin/users/{id}` `{"requireDeviceBoundPasskeys"}`: whether the account accepts only device-bound
    /// passkeys (synced ones are then refused at registration and at sign-in). Audited.
    @Sendable func changeUser(request: Request, context: Context) async throws -> JSONResponse<UserDetail> {
        let id = try context.parameters.require("id")
        let patch = try await request.decodeJSON(as: UserPatch.self, context: context)
        guard try await self.store.setRequireDeviceBoundPasskeys(userId: id, required: patch.requireDeviceBoundPasskeys) else {
            throw APIError.userNotFound
        }
        try await self.audit.record(
            .passkeyPolicyChanged,
            userId: id,
            reason: "\(self.actor(context)): device-bound passkeys \(patch.requireDeviceBoundPasskeys ? "required" : "not required")"
        )
        return try await self.user(request: request, context: context)
    }

    /// The windows `GET /v1/admin/stats` draws: the last hour in 5-minute buckets, the last day in hours.
    enum StatsWindow: String, CaseIterable {
        case hour, day

        var bucket: TimeInterval { self == .hour ? 300 : 3600 }
        var buckets: Int { self == .hour ? 12 : 24 }
    }

    /// The sign-in methods charted, by their audit event types.
    static let signInTypes: [(method: String, type: AuditEventType)] = [
        ("password", .passwordLogin), ("biometric", .biometricLogin), ("pin", .pinLogin), ("passkey", .passkeyLogin),
    ]

    struct Stats: Encodable {
        struct Bucket: Encodable {
            var start: String
            /// Method → outcome (`success`, `failure`) → count.
            var signIns: [String: [String: Int64]]
        }

        var window: String
        var bucketSeconds: Int
        var since: String
        var until: String
        var buckets: [Bucket]
        /// Failed sign-ins by error code over the window.
        var failuresByCode: [String: Int64]
        var lockouts: Int64
        var pinDisabled: Int64
        var rateLimited: Int64
        var addressesBlocked: Int64
    }

    /// `GET /v1/admin/stats?window=hour|day`: sign-ins by method and outcome per bucket, and the window's failures by
    /// code, lockouts, PIN disables and rate-limit refusals, counted from the audit trail (every instance's).
    @Sendable func stats(request: Request, context: Context) async throws -> JSONResponse<Stats> {
        let text = request.uri.queryParameters["window"].map(String.init) ?? "hour"
        guard let window = StatsWindow(rawValue: text) else {
            throw APIError.invalidRequest("parameter 'window' must be hour or day")
        }
        let now = self.now()
        let current = (now.timeIntervalSince1970 / window.bucket).rounded(.down) * window.bucket
        let since = Date(timeIntervalSince1970: current - window.bucket * Double(window.buckets - 1))
        let incidentTypes: [AuditEventType] = [.registrationLocked, .passkeyLocked, .pinDisabled, .rateLimited, .addressBlocked]
        let counts = try await self.store.auditEventCounts(
            since: since,
            bucket: window.bucket,
            types: Self.signInTypes.map(\.type.rawValue) + incidentTypes.map(\.rawValue)
        )
        var buckets = (0..<window.buckets).map { index in
            Stats.Bucket(
                start: Date(timeIntervalSince1970: since.timeIntervalSince1970 + window.bucket * Double(index)).rfc3339,
                signIns: Dictionary(uniqueKeysWithValues: Self.signInTypes.map { ($0.method, ["success": Int64(0), "failure": Int64(0)]) })
            )
        }
        var stats = Stats(
            window: window.rawValue,
            bucketSeconds: Int(window.bucket),
            since: since.rfc3339,
            until: now.rfc3339,
            buckets: [],
            failuresByCode: [:],
            lockouts: 0,
            pinDisabled: 0,
            rateLimited: 0,
            addressesBlocked: 0
        )
        let methods = Dictionary(uniqueKeysWithValues: Self.signInTypes.map { ($0.type.rawValue, $0.method) })
        for count in counts {
            if let method = methods[count.type] {
                let index = Int(((count.bucketStart.timeIntervalSince1970 - since.timeIntervalSince1970) / window.bucket).rounded())
                if buckets.indices.contains(index), count.outcome == "success" || count.outcome == "failure" {
                    buckets[index].signIns[method, default: [:]][count.outcome, default: 0] += count.count
                }
                if count.outcome == "failure" {
                    stats.failuresByCode[ServerMetrics.boundedCode(count.reason), default: 0] += count.count
                }
                continue
            }
            switch AuditEventType(rawValue: count.type) {
            case .registrationLocked, .passkeyLocked: stats.lockouts += count.count
            case .pinDisabled: stats.pinDisabled += count.count
            case .rateLimited: stats.rateLimited += count.count
            case .addressBlocked: stats.addressesBlocked += count.count
            default: break
            }
        }
        stats.buckets = buckets
        return JSONResponse(.ok, stats)
    }

    struct SessionList: Encodable {
        struct Entry: Encodable {
            /// The session's public id (what access tokens name as `sid`); absent for sessions that never had one.
            var id: String?
            var createdAt: String
            var authenticatedAt: String
            var expiresAt: String
            var idleExpiresAt: String
            var methods: [String]
            var registrationId: String?
        }

        var sessions: [Entry]
    }

    /// `GET /v1/admin/users/{id}/sessions`: the user's live sessions (never their tokens or token hashes).
    @Sendable func sessions(request: Request, context: Context) async throws -> JSONResponse<SessionList> {
        guard let user = try await self.store.user(id: try context.parameters.require("id")) else { throw APIError.userNotFound }
        let sessions = try await self.store.activeSessions(userId: user.id, at: self.now())
        return JSONResponse(
            .ok,
            SessionList(
                sessions: sessions.map {
                    .init(
                        id: $0.id,
                        createdAt: $0.createdAt.rfc3339,
                        authenticatedAt: $0.authenticatedAt.rfc3339,
                        expiresAt: $0.expiresAt.rfc3339,
                        idleExpiresAt: $0.idleExpiresAt.rfc3339,
                        methods: $0.methods.map(\.rawValue),
                        registrationId: $0.registrationId
                    )
                }
            )
        )
    }

    /// `POST /v1/admin/registrations/{id}/unlock`: a locked registration active again (409 when it is not locked).
    @Sendable func unlockRegistration(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        guard let registration = try await self.store.registration(id: id), registration.status != .pending else {
            throw APIError.registrationNotFound
        }
        guard try await self.store.unlockRegistration(id: id, at: self.now()) else { throw APIError.registrationNotLocked }
        try await self.audit.record(.registrationUnlocked, userId: registration.userId, registrationId: id, reason: self.actor(context))
        return .noContent
    }

    /// `POST /v1/admin/passkeys/{id}/unlock`: a locked passkey usable again (409 when it is not locked).
    @Sendable func unlockPasskey(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        guard let passkey = try await self.store.passkey(id: id) else { throw APIError.passkeyNotFound }
        guard try await self.store.unlockPasskey(id: id, userId: passkey.userId) else { throw APIError.passkeyNotLocked }
        try await self.audit.record(.passkeyUnlocked, userId: passkey.userId, passkeyId: id, reason: self.actor(context))
        return .noContent
    }
}
