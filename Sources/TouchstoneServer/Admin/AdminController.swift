import Foundation
import Hummingbird
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebAuthn

/// The operator's API: `/v1/admin/...`, with an admin key (`touchstone admin create-key`).
struct AdminController {
    typealias Context = TouchstoneRequestContext

    let store: any TouchstoneStore
    let policy: PolicyProvider
    let audit: AuditLog
    let now: @Sendable () -> Date
    let metadata: AuthenticatorMetadataService

    func addRoutes(to router: Router<Context>) {
        let admin = router.group("/v1/admin").add(middleware: AdminAuthenticator(store: self.store))
        admin.get("/users", use: self.users)
        admin.get("/users/:id", use: self.user)
        admin.delete("/users/:id", use: self.deleteUser)
        admin.post("/users/:id/sign-out", use: self.signOutEverywhere)
        admin.delete("/registrations/:id", use: self.revokeRegistration)
        admin.delete("/passkeys/:id", use: self.removePasskey)
        admin.get("/events", use: self.events)
        admin.get("/policy", use: self.readPolicy)
        admin.patch("/policy", use: self.changePolicy)
        admin.get("/authenticator-metadata", use: self.authenticatorMetadata)
        admin.post("/authenticator-metadata/refresh", use: self.refreshAuthenticatorMetadata)
        admin.get("/blocked-addresses", use: self.blockedAddresses)
        admin.delete("/blocked-addresses/:address", use: self.unblockAddress)
        self.addConsoleRoutes(to: admin)
    }

    /// Who did it, for the audit trail: the admin key's name.
    func actor(_ context: Context) -> String { "admin:\(context.adminKey?.name ?? "?")" }

    struct UserPage: Encodable {
        var users: [UserResource]
        var nextCursor: String?
    }

    /// `GET /v1/admin/users?email=&limit=&cursor=`: newest first; `email` matches any part of the address.
    @Sendable func users(request: Request, context: Context) async throws -> JSONResponse<UserPage> {
        let parameters = request.uri.queryParameters
        var limit = 50
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...500).contains(value) else {
                throw APIError.invalidRequest("parameter 'limit' must be between 1 and 500")
            }
            limit = value
        }
        let email = parameters["email"].map { String($0.prefix(254)).lowercased() }
        let cursor = parameters["cursor"].map { String($0.prefix(64)) }
        let users = try await self.store.users(emailContaining: email, afterId: cursor, limit: limit + 1)
        let page = Array(users.prefix(limit))
        return JSONResponse(
            .ok,
            UserPage(users: page.map(UserResource.init), nextCursor: users.count > limit ? page.last?.id : nil)
        )
    }

    struct UserDetail: Encodable {
        var user: UserResource
        var registrations: [RegistrationResource]
        var passkeys: [PasskeyResource]
        /// Whether the account accepts only device-bound passkeys (`PATCH /v1/admin/users/{id}`).
        var requireDeviceBoundPasskeys: Bool
    }

    @Sendable func user(request: Request, context: Context) async throws -> JSONResponse<UserDetail> {
        guard let user = try await self.store.user(id: try context.parameters.require("id")) else { throw APIError.userNotFound }
        let registrations = try await self.store.registrations(userId: user.id)
        let passkeys = try await self.store.passkeys(userId: user.id)
        let blob = self.metadata.current
        return JSONResponse(
            .ok,
            UserDetail(
                user: UserResource(user),
                registrations: registrations.map(RegistrationResource.init),
                passkeys: passkeys.map { PasskeyResource($0, metadata: blob, refusing: self.metadata.settings.refusedStatuses) },
                requireDeviceBoundPasskeys: user.requireDeviceBoundPasskeys
            )
        )
    }

    /// `DELETE /v1/admin/users/{id}`: deletes the account with its sessions, devices, passkeys, confirmations and
    /// OpenID grants; the audit trail keeps its events, and `user.deleted` is announced in the same transaction.
    @Sendable func deleteUser(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        // The goodbye mail goes to the address the account had (the mail queue keeps nothing of the user).
        let address = try await self.store.user(id: id)?.email
        let event = self.audit.event(.userDeleted, userId: id, reason: self.actor(context), notify: address)
        guard try await self.audit.commit(event, when: { tx in
            try await tx.deleteUser(id: id, at: self.now())
        }) else {
            throw APIError.userNotFound
        }
        return .noContent
    }

    struct SignedOut: Encodable { var revokedSessions: Int }

    /// `POST /v1/admin/users/{id}/sign-out`: revokes every session of the user.
    @Sendable func signOutEverywhere(request: Request, context: Context) async throws -> JSONResponse<SignedOut> {
        guard let user = try await self.store.user(id: try context.parameters.require("id")) else { throw APIError.userNotFound }
        let count = try await self.store.revokeSessions(userId: user.id, keeping: nil, at: self.now())
        try await self.audit.record(.sessionsRevokedAll, userId: user.id, reason: self.actor(context))
        return JSONResponse(.ok, SignedOut(revokedSessions: count))
    }

    /// `DELETE /v1/admin/registrations/{id}`: revokes any registration that is active or locked.
    @Sendable func revokeRegistration(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        guard let registration = try await self.store.registration(id: id), registration.status != .pending else {
            throw APIError.registrationNotFound
        }
        let now = self.now()
        try await self.audit.commit(self.audit.event(.registrationRevoked, userId: registration.userId, registrationId: id, reason: self.actor(context))) { tx in
            try await tx.updateRegistrationStatus(id: id, from: [.active, .locked], to: .revoked, at: now)
        }
        return .noContent
    }

    /// `DELETE /v1/admin/passkeys/{id}`.
    @Sendable func removePasskey(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        guard let passkey = try await self.store.passkey(id: id),
            try await self.audit.commit(self.audit.event(.passkeyRemoved, userId: passkey.userId, passkeyId: id, reason: self.actor(context)), when: { tx in
                try await tx.deletePasskey(id: id, userId: passkey.userId)
            })
        else {
            throw APIError.passkeyNotFound
        }
        return .noContent
    }

    /// `GET /v1/admin/events?userId=&type=&since=&until=&limit=&cursor=`: newest first.
    @Sendable func events(request: Request, context: Context) async throws -> JSONResponse<AuditEventPage> {
        let parameters = request.uri.queryParameters
        var query = try AuditPaging.query(from: parameters, maximumLimit: 1000)
        query.userId = parameters["userId"].map { String($0.prefix(64)) }
        return JSONResponse(.ok, try await AuditPaging.page(query, store: self.store))
    }

    struct BlockedAddressList: Encodable {
        struct Entry: Encodable {
            var address: String
            var failures: Int64
            var lastFailureAt: String
            var blockedUntil: String
        }

        var addresses: [Entry]
    }

    /// `GET /v1/admin/blocked-addresses`: client addresses refused after too many failed password or PIN checks.
    @Sendable func blockedAddresses(request: Request, context: Context) async throws -> JSONResponse<BlockedAddressList> {
        let blocked = try await self.store.blockedAddresses(at: self.now(), limit: 1000)
        return JSONResponse(
            .ok,
            BlockedAddressList(
                addresses: blocked.map {
                    .init(
                        address: $0.address,
                        failures: $0.failures,
                        lastFailureAt: $0.lastFailureAt.rfc3339,
                        blockedUntil: ($0.blockedUntil ?? $0.lastFailureAt).rfc3339
                    )
                }
            )
        )
    }

    /// `DELETE /v1/admin/blocked-addresses/{address}`: lifts the block (404 `address_not_blocked` when there is none).
    @Sendable func unblockAddress(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let raw = try context.parameters.require("address")
        let address = String((raw.removingPercentEncoding ?? raw).prefix(64))
        // Blocked addresses are client addresses: one with a control character is none of them (and a NUL cannot even
        // be looked up on PostgreSQL, whose text refuses it).
        guard (try? InputRules.noControlCharacters(address, field: "address")) != nil,
            try await BlockedAddresses.unblock(address, actor: self.actor(context), store: self.store, audit: self.audit)
        else {
            throw APIError.addressNotBlocked
        }
        return .noContent
    }

    @Sendable func readPolicy(request: Request, context: Context) async throws -> JSONResponse<RuntimePolicy> {
        JSONResponse(.ok, self.policy.current)
    }

    /// Any subset of the policy's fields; the result is validated as a whole and applies to every instance.
    struct PolicyPatch: Decodable {
        var biometricsEnabled: Bool?
        var devicePolicy: DevicePolicy?
        var algorithms: [SignatureAlgorithm]?
        var lockoutThreshold: Int?
        var pinMaxAttempts: Int?
        var sessionLifetimeMinutes: Int?
        var sessionIdleMinutes: Int?

        enum CodingKeys: CodingKey {
            case biometricsEnabled, devicePolicy, algorithms, lockoutThreshold, pinMaxAttempts, sessionLifetimeMinutes
            case sessionIdleMinutes
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.biometricsEnabled = try container.decodeIfPresent(Bool.self, forKey: .biometricsEnabled)
            self.devicePolicy = try container.decodeIfPresent(DevicePolicy.self, forKey: .devicePolicy)
            self.algorithms = try container.decodeIfPresent([SignatureAlgorithm].self, forKey: .algorithms)
            self.lockoutThreshold = try container.decodeIntegerIfPresent(.lockoutThreshold)
            self.pinMaxAttempts = try container.decodeIntegerIfPresent(.pinMaxAttempts)
            self.sessionLifetimeMinutes = try container.decodeIntegerIfPresent(.sessionLifetimeMinutes)
            self.sessionIdleMinutes = try container.decodeIntegerIfPresent(.sessionIdleMinutes)
        }
    }

    @Sendable func changePolicy(request: Request, context: Context) async throws -> JSONResponse<RuntimePolicy> {
        let patch = try await request.decodeJSON(as: PolicyPatch.self, context: context)
        var policy = self.policy.current
        if let value = patch.biometricsEnabled { policy.biometricsEnabled = value }
        if let value = patch.devicePolicy { policy.devicePolicy = value }
        if let value = patch.algorithms { policy.algorithms = Array(Set(value)).sorted { $0.rawValue < $1.rawValue } }
        if let value = patch.lockoutThreshold { policy.lockoutThreshold = value }
        if let value = patch.pinMaxAttempts { policy.pinMaxAttempts = value }
        if let value = patch.sessionLifetimeMinutes { policy.sessionLifetimeMinutes = value }
        if let value = patch.sessionIdleMinutes { policy.sessionIdleMinutes = value }
        if let message = policy.validationError() { throw APIError.invalidRequest(message) }
        try await self.policy.save(policy, to: self.store, at: self.now())
        try await self.audit.record(.policyChanged, reason: self.actor(context))
        return JSONResponse(.ok, policy)
    }

    // MARK: Authenticator metadata

    struct MetadataReport: Encodable {
        struct Affected: Encodable {
            var userId: String
            var passkey: PasskeyResource
        }
        /// Whether a BLOB is in use.
        var loaded: Bool
        var number: Int?
        var nextUpdate: String?
        /// Past its nextUpdate and not yet replaced (see `lastError`).
        var stale: Bool
        var entries: Int
        var source: String?
        var storedAt: String?
        var legalHeader: String?
        /// Why the last refresh from the source failed, if it did.
        var lastError: String?
        var refusedStatuses: [String]
        var requireCertified: Bool
        /// Passkeys of models with a status report the policy refuses, newest first (at most 500).
        var affectedPasskeys: [Affected]
    }

    /// `GET /v1/admin/authenticator-metadata`: the BLOB in use and the passkeys its status reports concern.
    @Sendable func authenticatorMetadata(request: Request, context: Context) async throws -> JSONResponse<MetadataReport> {
        let status = self.metadata.status
        let refused = self.metadata.settings.refusedStatuses
        var affected: [MetadataReport.Affected] = []
        if let blob = status.blob, !refused.isEmpty {
            let concerned = blob.entries.filter { $0.activeReport(refusing: refused) != nil }
            let passkeys = try await self.store.passkeys(
                aaguids: concerned.compactMap(\.aaguid),
                attestationKeyIds: concerned.flatMap(\.attestationCertificateKeyIdentifiers),
                limit: 500
            )
            // The query matches by AAGUID or key identifier; the resource applies the U2F rule (key identifier only).
            affected = passkeys.map { MetadataReport.Affected(userId: $0.userId, passkey: PasskeyResource($0, metadata: blob, refusing: refused)) }
                .filter { $0.passkey.authenticatorStatus?.refusedStatus != nil }
        }
        let blob = status.blob
        return JSONResponse(
            .ok,
            MetadataReport(
                loaded: blob != nil,
                number: blob?.number,
                nextUpdate: blob.map { Self.day($0.nextUpdate) },
                stale: blob?.isStale(at: self.now()) ?? false,
                entries: blob?.entries.count ?? 0,
                source: status.source,
                storedAt: status.storedAt?.rfc3339,
                legalHeader: blob?.legalHeader,
                lastError: status.lastError,
                refusedStatuses: refused.map(\.rawValue).sorted(),
                requireCertified: self.metadata.settings.requireCertified,
                affectedPasskeys: affected
            )
        )
    }

    /// `POST /v1/admin/authenticator-metadata/refresh`: reads the source now (a new file, or a BLOB published before
    /// the one in use is due), then answers as `GET`.
    @Sendable func refreshAuthenticatorMetadata(request: Request, context: Context) async throws -> JSONResponse<MetadataReport> {
        await self.metadata.refresh(force: true)
        return try await self.authenticatorMetadata(request: request, context: context)
    }

    /// `YYYY-MM-DD` of a UTC midnight.
    static func day(_ date: Date) -> String { String(date.rfc3339.prefix(10)) }
}
