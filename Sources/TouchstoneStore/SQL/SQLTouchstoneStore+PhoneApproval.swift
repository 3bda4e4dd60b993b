public import Foundation
import SQLKit

// Sign-ins approved on a phone (issue #34): requests decided and redeemed by conditional updates, device channels.
extension SQLTouchstoneStore {
    public func insertSignInRequest(_ request: SignInRequestRecord, maximumPending: Int, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.executor.withTransaction { db in
            // Serialised per address (issue #44 item 4): the address's row in serial_keys is locked until commit, so a
            // concurrent request for it, on any instance, counts after this one's insert (PostgreSQL's READ COMMITTED
            // gives each statement a fresh snapshot; on SQLite the one writer serialises anyway).
            if let email = request.email { try await Self.serialise("sign_in_requests:\(email)", in: db) }
            let inserted = try await db.raw(
                """
                INSERT INTO sign_in_requests (id, kind, email, user_id, client_id, client_name, binding_message, scope, poll_token_hash,
                    secret_hash, number, choices, browser_address, browser_user_agent, created_at, expires_at, status)
                SELECT \(bind: request.id), \(bind: request.kind.rawValue), \(bind: request.email), \(bind: request.userId),
                    \(bind: request.clientId), \(bind: request.clientName), \(bind: request.bindingMessage), \(bind: request.scope),
                    \(bind: request.pollTokenHash), \(bind: request.secretHash), \(bind: request.number.map(Int64.init)),
                    \(bind: request.choices.map(String.init).joined(separator: ",")), \(bind: request.browserAddress),
                    \(bind: request.browserUserAgent), \(bind: request.createdAt.millis), \(bind: request.expiresAt.millis),
                    \(bind: request.status.rawValue)
                WHERE (
                    SELECT COUNT(*) FROM sign_in_requests
                    WHERE email = \(bind: request.email ?? "") AND status = 'pending' AND expires_at > \(bind: at.millis)
                ) < \(bind: Int64(request.email == nil ? Int.max : maximumPending))
                RETURNING id
                """
            ).first() != nil
            guard inserted else { return false }
            for event in events { try await Self.insert(event, into: db) }
            return true
        }
    }

    public func signInRequest(id: String) async throws -> SignInRequestRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM sign_in_requests WHERE id = \(bind: id)").first().map(SignInRequestRecord.init(row:))
        }
    }

    public func signInRequest(pollTokenHash: String) async throws -> SignInRequestRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM sign_in_requests WHERE poll_token_hash = \(bind: pollTokenHash)").first()
                .map(SignInRequestRecord.init(row:))
        }
    }

    public func signInRequests(userId: String, limit: Int) async throws -> [SignInRequestRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM sign_in_requests WHERE user_id = \(bind: userId) ORDER BY created_at DESC, id LIMIT \(bind: max(1, limit))"
            ).all().map(SignInRequestRecord.init(row:))
        }
    }

    public func pendingSignInRequests(userId: String, at: Date) async throws -> [SignInRequestRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT * FROM sign_in_requests
                WHERE user_id = \(bind: userId) AND status = 'pending' AND expires_at > \(bind: at.millis)
                ORDER BY created_at, id
                """
            ).all().map(SignInRequestRecord.init(row:))
        }
    }

    public func bindSignInRequest(id: String, userId: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE sign_in_requests SET user_id = \(bind: userId)
                WHERE id = \(bind: id) AND user_id IS NULL AND email IS NULL AND status = 'pending' AND expires_at > \(bind: at.millis)
                RETURNING id
                """
            ).first() != nil
        }
    }

    public func decideSignInRequest(id: String, decision: SignInRequestDecision, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.executor.withTransaction { db in
            let decided = try await db.raw(
                """
                UPDATE sign_in_requests SET status = \(bind: decision.status.rawValue), decided_at = \(bind: at.millis),
                    registration_id = \(bind: decision.registrationId), reason = \(bind: decision.reason), signature = \(bind: decision.signature)
                WHERE id = \(bind: id) AND status = 'pending' AND expires_at > \(bind: at.millis)
                RETURNING id
                """
            ).first() != nil
            guard decided else { return false }
            if decision.status == .approved {
                try await db.raw(
                    "UPDATE registrations SET last_used_at = \(bind: at.millis), failed_attempts = 0 WHERE id = \(bind: decision.registrationId)"
                ).run()
            }
            for event in events { try await Self.insert(event, into: db) }
            return true
        }
    }

    public func redeemSignInRequest(id: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE sign_in_requests SET redeemed_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND status = 'approved' AND redeemed_at IS NULL
                RETURNING id
                """
            ).first() != nil
        }
    }

    public func recordSignInRequestPoll(id: String, interval: TimeInterval, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE sign_in_requests SET last_polled_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND (last_polled_at IS NULL OR last_polled_at <= \(bind: at.addingTimeInterval(-interval).millis))
                RETURNING id
                """
            ).first() != nil
        }
    }

    public func setDeviceCredential(registrationId: String, credentialHash: String, at: Date) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO device_channels (registration_id, credential_hash, created_at)
                VALUES (\(bind: registrationId), \(bind: credentialHash), \(bind: at.millis))
                ON CONFLICT (registration_id) DO UPDATE SET credential_hash = \(bind: credentialHash), created_at = \(bind: at.millis)
                """
            ).run()
        }
    }

    public func deviceChannel(registrationId: String) async throws -> DeviceChannelRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM device_channels WHERE registration_id = \(bind: registrationId)").first()
                .map(DeviceChannelRecord.init(row:))
        }
    }

    public func deviceChannels(userId: String) async throws -> [DeviceChannelRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT c.* FROM device_channels c JOIN registrations r ON r.id = c.registration_id
                WHERE r.user_id = \(bind: userId) AND r.status = 'active'
                ORDER BY r.created_at, r.id
                """
            ).all().map(DeviceChannelRecord.init(row:))
        }
    }

    public func setPushToken(registrationId: String, platform: String, token: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE device_channels SET push_platform = \(bind: platform), push_token = \(bind: token), push_updated_at = \(bind: at.millis)
                WHERE registration_id = \(bind: registrationId)
                RETURNING registration_id
                """
            ).first() != nil
        }
    }

    public func clearPushToken(registrationId: String, token: String) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE device_channels SET push_platform = NULL, push_token = NULL
                WHERE registration_id = \(bind: registrationId) AND push_token = \(bind: token)
                """
            ).run()
        }
    }

    public func pausePhoneApprovals(userId: String, until: Date) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO phone_approval_pauses (user_id, until) VALUES (\(bind: userId), \(bind: until.millis))
                ON CONFLICT (user_id) DO UPDATE SET until = \(bind: until.millis)
                """
            ).run()
        }
    }

    public func phoneApprovalsPausedUntil(userId: String, at: Date) async throws -> Date? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT until FROM phone_approval_pauses WHERE user_id = \(bind: userId) AND until > \(bind: at.millis)"
            ).first().map { Date(millis: try $0.decode(column: "until", as: Int64.self)) }
        }
    }
}

extension SignInRequestRecord {
    init(row: any SQLRow) throws {
        guard let kind = Kind(rawValue: try row.decode(column: "kind", as: String.self)),
            let status = Status(rawValue: try row.decode(column: "status", as: String.self))
        else {
            throw StoreError.unavailable("a stored sign-in request has an unknown kind or status")
        }
        let choices = try row.decode(column: "choices", as: String.self).split(separator: ",").compactMap { Int($0) }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            kind: kind,
            email: try row.decode(column: "email", as: String?.self),
            userId: try row.decode(column: "user_id", as: String?.self),
            clientId: try row.decode(column: "client_id", as: String?.self),
            clientName: try row.decode(column: "client_name", as: String.self),
            bindingMessage: try row.decode(column: "binding_message", as: String?.self),
            scope: try row.decode(column: "scope", as: String?.self),
            pollTokenHash: try row.decode(column: "poll_token_hash", as: String.self),
            secretHash: try row.decode(column: "secret_hash", as: String?.self),
            number: try row.decode(column: "number", as: Int64?.self).map(Int.init),
            choices: choices,
            browserAddress: try row.decode(column: "browser_address", as: String?.self),
            browserUserAgent: try row.decode(column: "browser_user_agent", as: String?.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"),
            status: status
        )
        self.decidedAt = try row.optionalDate("decided_at")
        self.registrationId = try row.decode(column: "registration_id", as: String?.self)
        self.reason = try row.decode(column: "reason", as: String?.self)
        self.signature = try row.decode(column: "signature", as: String?.self)
        self.redeemedAt = try row.optionalDate("redeemed_at")
        self.lastPolledAt = try row.optionalDate("last_polled_at")
    }
}

extension DeviceChannelRecord {
    init(row: any SQLRow) throws {
        self.init(
            registrationId: try row.decode(column: "registration_id", as: String.self),
            credentialHash: try row.decode(column: "credential_hash", as: String.self),
            createdAt: try row.date("created_at"),
            pushPlatform: try row.decode(column: "push_platform", as: String?.self),
            pushToken: try row.decode(column: "push_token", as: String?.self)
        )
    }
}
