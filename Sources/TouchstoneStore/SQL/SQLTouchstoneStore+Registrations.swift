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
                return try replaced.map { try $0.decode(column: "id", as: String.self) }
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
        return try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE registrations SET status = \(bind: to.rawValue), status_changed_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND status IN (\(allowed)) RETURNING id
                """
            ).first() != nil
        }
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
