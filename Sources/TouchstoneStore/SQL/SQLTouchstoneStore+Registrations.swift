public import Foundation
import SQLKit
import TouchstoneCrypto

// Device-key registrations: enrolment, activation (replacing what it supersedes), status, lockout.
extension SQLTouchstoneStore {
    public func insertRegistration(_ registration: RegistrationRecord) async throws {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                INSERT INTO registrations (id, user_id, device_id, device_name, algorithm, public_key, key_fingerprint,
                    status, created_at, last_used_at, status_changed_at, app_attest_key_id, key_attestation_level,
                    key_attestation_package, proof_jkt)
                VALUES (\(bind: registration.id), \(bind: registration.userId), \(bind: registration.deviceId),
                    \(bind: registration.deviceName), \(bind: registration.algorithm),
                    \(bind: registration.publicKey.base64URL), \(bind: registration.keyFingerprint),
                    \(bind: registration.status.rawValue), \(bind: registration.createdAt.millis),
                    \(bind: registration.lastUsedAt?.millis), \(bind: registration.statusChangedAt?.millis),
                    \(bind: registration.appAttestKeyId), \(bind: registration.keyAttestation?.securityLevel),
                    \(bind: registration.keyAttestation?.packageName), \(bind: registration.proofKeyThumbprint))
                """
            ).run()
        }
    }

    public func setRegistrationProofKey(id: String, userId: String, thumbprint: String) async throws -> Bool {
        do {
            return try await self.executor.withDatabase { db in
                try await db.raw(
                    """
                    UPDATE registrations SET proof_jkt = \(bind: thumbprint)
                    WHERE id = \(bind: id) AND user_id = \(bind: userId) AND proof_jkt IS NULL AND status IN ('pending', 'active')
                    RETURNING id
                    """
                ).first() != nil
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("the proof key is registered already")
        }
    }

    public func registration(id: String) async throws -> RegistrationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM registrations WHERE id = \(bind: id)").first()
                .map(RegistrationRecord.init(row:))
        }
    }

    public func latestRegistration(keyFingerprint: String) async throws -> RegistrationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT * FROM registrations
                WHERE key_fingerprint = \(bind: keyFingerprint) AND status <> 'pending'
                ORDER BY created_at DESC, id DESC LIMIT 1
                """
            ).first().map(RegistrationRecord.init(row:))
        }
    }

    public func activeRegistration(deviceId: String) async throws -> RegistrationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                "SELECT * FROM registrations WHERE device_id = \(bind: deviceId) AND status = 'active'"
            ).first().map(RegistrationRecord.init(row:))
        }
    }

    public func registrations(userId: String) async throws -> [RegistrationRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw(
                """
                SELECT * FROM registrations WHERE user_id = \(bind: userId) AND status <> 'pending'
                ORDER BY created_at DESC, id DESC
                """
            ).all().map(RegistrationRecord.init(row:))
        }
    }

    public func activateRegistration(id: String, replacing scope: ReplacementScope, at: Date) async throws -> [String] {
        do {
            return try await self.executor.withTransaction { db in
                guard
                    let row = try await db.raw(
                        "SELECT * FROM registrations WHERE id = \(bind: id) AND status = 'pending'"
                    ).first()
                else {
                    throw StoreError.notFound("registration \(id) is not pending")
                }
                let registration = try RegistrationRecord(row: row)
                if try await db.raw(
                    """
                    SELECT id FROM registrations
                    WHERE device_id = \(bind: registration.deviceId) AND status IN ('active', 'locked')
                        AND user_id <> \(bind: registration.userId)
                    """
                ).first() != nil {
                    throw StoreError.conflict("device is enrolled for another user")
                }
                let replaced: [any SQLRow]
                switch scope {
                case .sameDevice:
                    replaced = try await db.raw(
                        """
                        UPDATE registrations SET status = 'replaced', status_changed_at = \(bind: at.millis)
                        WHERE user_id = \(bind: registration.userId) AND device_id = \(bind: registration.deviceId)
                            AND status IN ('active', 'locked') AND id <> \(bind: id)
                        RETURNING id
                        """
                    ).all()
                case .allOfUser:
                    replaced = try await db.raw(
                        """
                        UPDATE registrations SET status = 'replaced', status_changed_at = \(bind: at.millis)
                        WHERE user_id = \(bind: registration.userId) AND status IN ('active', 'locked') AND id <> \(bind: id)
                        RETURNING id
                        """
                    ).all()
                }
                try await db.raw(
                    """
                    UPDATE registrations SET status = 'active', status_changed_at = \(bind: at.millis)
                    WHERE id = \(bind: id)
                    """
                ).run()
                let replacedIds = try replaced.map { try $0.decode(column: "id", as: String.self) }
                try await Self.endBoundSessions(registrationIds: replacedIds, at: at, in: db)
                return replacedIds
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("device is enrolled for another user")
        }
    }

    public func updateRegistrationStatus(
        id: String,
        from: Set<RegistrationStatus>,
        to: RegistrationStatus,
        at: Date
    ) async throws -> Bool {
        let allowed = SQLList(from.sorted { $0.rawValue < $1.rawValue }.map { SQLBind($0.rawValue) })
        return try await self.executor.withTransaction { db in
            let changed = try await db.raw(
                """
                UPDATE registrations SET status = \(bind: to.rawValue), status_changed_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND status IN (\(allowed)) RETURNING id
                """
            ).first() != nil
            if changed, ![.active, .locked].contains(to) { try await Self.endBoundSessions(registrationIds: [id], at: at, in: db) }
            return changed
        }
    }

    /// Ends the sessions bound to these registrations' proof keys (issue #43: the phone's own device-key and PIN
    /// sign-ins, once the registration has a proof key) when the registrations end, and with them their OpenID
    /// token families, announcing each to its clients by back-channel logout (issue #44 item 3). Reading such a
    /// session already finds it ended with its registration; this makes the end a revocation that is announced.
    static func endBoundSessions(registrationIds: [String], at: Date, in db: any SQLDatabase) async throws {
        guard !registrationIds.isEmpty else { return }
        let ended = try await db.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: at.millis)
            WHERE registration_id IN (\(binds: registrationIds)) AND revoked_at IS NULL
                AND (',' || methods || ',' LIKE '%,biometric,%' OR ',' || methods || ',' LIKE '%,pin,%')
                AND EXISTS (SELECT 1 FROM registrations r WHERE r.id = sessions.registration_id AND r.proof_jkt IS NOT NULL)
            RETURNING id
            """
        ).all()
        try await Self.endTokenFamilies(sessionIds: try ended.compactMap { try $0.decode(column: "id", as: String?.self) }, at: at, in: db)
    }

    public func recordFailedSignature(registrationId: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            // One statement: concurrent failures each count, and exactly the one that reaches the threshold locks.
            try await db.raw(
                """
                UPDATE registrations SET failed_attempts = failed_attempts + 1,
                    status = CASE WHEN failed_attempts + 1 >= \(bind: threshold) THEN 'locked' ELSE status END,
                    status_changed_at = CASE WHEN failed_attempts + 1 >= \(bind: threshold) THEN \(bind: at.millis)
                        ELSE status_changed_at END
                WHERE id = \(bind: registrationId) AND status = 'active'
                RETURNING status
                """
            ).first()?.decode(column: "status", as: String.self) == RegistrationStatus.locked.rawValue
        }
    }

    public func unlockRegistration(id: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET status = 'active', failed_attempts = 0, status_changed_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND status = 'locked' RETURNING id
                """
            ).first() != nil
        }
    }
}
