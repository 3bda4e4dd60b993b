public import Foundation
import SQLKit

/// The reads of a sign-in's finish, joined: one statement (one round trip on PostgreSQL, one read transaction on
/// SQLite) instead of one per record, and the records come from one snapshot.
extension SQLTouchstoneStore {
    public func signInAttempt(registrationId: String, challenge: String, purpose: ChallengePurpose) async throws
        -> SignInAttemptRecord?
    {
        try await self.executor.withReadOnlyDatabase { db in
            guard
                let row = try await db.hot(
                    """
                    SELECT \(unsafeRaw: Self.registrationColumns),
                        \(unsafeRaw: Self.joinedUserColumns),
                        c.challenge AS challenge__challenge, c.created_at AS challenge__created_at,
                        c.expires_at AS challenge__expires_at
                    FROM registrations r
                    LEFT JOIN users u ON u.id = r.user_id
                    LEFT JOIN challenges c ON c.challenge = \(bind: challenge) AND c.registration_id = r.id
                        AND c.purpose = \(bind: purpose.rawValue) AND c.consumed_at IS NULL
                    WHERE r.id = \(bind: registrationId)
                    """
                ).first
            else {
                return nil
            }
            let registration = try RegistrationRecord(row: row)
            var issued: ChallengeRecord?
            if let value = try row.decode(column: "challenge__challenge", as: String?.self) {
                issued = ChallengeRecord(
                    challenge: value,
                    registrationId: registration.id,
                    purpose: purpose,
                    createdAt: try row.date("challenge__created_at"),
                    expiresAt: try row.date("challenge__expires_at")
                )
            }
            return SignInAttemptRecord(registration: registration, user: try UserRecord(joined: row, prefix: "user__"), challenge: issued)
        }
    }

    // The joins' select lists, built once (they were about 1 % of a sign-in's CPU when built per call).
    private static let registrationColumns = selectList(RegistrationRecord.columns, table: "r")
    private static let passkeyColumns = selectList(PasskeyRecord.columns, table: "p")
    private static let joinedUserColumns = selectList(UserRecord.columns, table: "u", prefix: "user__")
    /// `(SELECT column FROM users WHERE id = ?) AS user__column, ...` for each of the user's columns.
    private static func userSubqueries(id: String) -> SQLQueryString {
        var list: SQLQueryString = ""
        for (index, column) in UserRecord.columns.enumerated() {
            if index > 0 { list += ", " }
            list += "(SELECT \(unsafeRaw: column) FROM users WHERE id = \(bind: id)) AS user__\(unsafeRaw: column)"
        }
        return list
    }

    private static let signerColumns = UserRecord.columns.map { "user__\($0)" }.joined(separator: ", ")

    public func insertChallengeIfActive(_ challenge: ChallengeRecord) async throws -> RegistrationStatus? {
        guard self.executor.hasDataModifyingWith else {
            // SQLite: the check and the insert on the writer, in one operation of its next group commit. The writer
            // reads from its own page cache; a read connection would begin a read transaction and, the database having
            // changed since its last one (it has, many times a second under load), re-read its pages (docs/performance.md,
            // item 13).
            return try await self.executor.withDatabase { db in
                let inserted = try await db.hot(
                    """
                    INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at)
                    SELECT \(bind: challenge.challenge), id, \(bind: challenge.purpose.rawValue),
                        \(bind: challenge.createdAt.millis), \(bind: challenge.expiresAt.millis)
                    FROM registrations WHERE id = \(bind: challenge.registrationId) AND status = \(bind: RegistrationStatus.active.rawValue)
                    RETURNING registration_id
                    """
                )
                guard inserted.isEmpty else { return .active }
                return try await db.hot("SELECT status FROM registrations WHERE id = \(bind: challenge.registrationId)")
                    .first.map(Self.registrationStatus(row:))
            }
        }
        return try await self.executor.withDatabase { db in
            try await db.hot(
                """
                WITH registration AS (
                    SELECT status FROM registrations WHERE id = \(bind: challenge.registrationId)
                ), issued AS (
                    INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at)
                    SELECT \(bind: challenge.challenge), \(bind: challenge.registrationId), \(bind: challenge.purpose.rawValue),
                        \(bind: challenge.createdAt.millis), \(bind: challenge.expiresAt.millis)
                    FROM registration WHERE status = \(bind: RegistrationStatus.active.rawValue)
                )
                SELECT status FROM registration
                """
            ).first.map(Self.registrationStatus(row:))
        }
    }

    /// A row's `status` column; a store error when it holds a value no build writes (a damaged or hand-edited row).
    private static func registrationStatus(row: any SQLRow) throws -> RegistrationStatus {
        let raw = try row.decode(column: "status", as: String.self)
        guard let status = RegistrationStatus(rawValue: raw) else {
            throw StoreError.unavailable("unexpected value \(raw) in column status")
        }
        return status
    }

    public func insertChallengeReadingSigner(_ challenge: ChallengeRecord) async throws -> SignInRegistrationRecord? {
        guard self.executor.hasDataModifyingWith else {
            // SQLite: the read and the insert on the writer, in one operation of its next group commit (see above); the
            // row is decoded after the operation (the writer's operations run one at a time).
            let row = try await self.executor.withDatabase { db -> (any SQLRow)? in
                guard
                    let row = try await db.hot(
                        "SELECT \(unsafeRaw: SignInRegistrationRecord.columns) FROM registrations WHERE id = \(bind: challenge.registrationId)"
                    ).first
                else {
                    return nil
                }
                if try row.decode(column: "status", as: String.self) == RegistrationStatus.active.rawValue {
                    _ = try await db.hot(
                        """
                        INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at)
                        VALUES (\(bind: challenge.challenge), \(bind: challenge.registrationId), \(bind: challenge.purpose.rawValue),
                            \(bind: challenge.createdAt.millis), \(bind: challenge.expiresAt.millis))
                        """
                    )
                }
                return row
            }
            return try row.map(SignInRegistrationRecord.init(row:))
        }
        return try await self.executor.withDatabase { db in
            try await db.hot(
                """
                WITH registration AS (
                    SELECT \(unsafeRaw: SignInRegistrationRecord.columns) FROM registrations WHERE id = \(bind: challenge.registrationId)
                ), issued AS (
                    INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at)
                    SELECT \(bind: challenge.challenge), \(bind: challenge.registrationId), \(bind: challenge.purpose.rawValue),
                        \(bind: challenge.createdAt.millis), \(bind: challenge.expiresAt.millis)
                    FROM registration WHERE status = \(bind: RegistrationStatus.active.rawValue)
                )
                SELECT \(unsafeRaw: SignInRegistrationRecord.columns) FROM registration
                """
            ).first.map(SignInRegistrationRecord.init(row:))
        }
    }

    /// Completes a sign-in (see the protocol): on PostgreSQL one statement, on SQLite one transaction on the writer.
    public func completeSignIn(
        challenge: String,
        registrationId: String,
        session: SessionRecord,
        events: [AuditEventRecord],
        at: Date
    ) async throws -> UserRecord? {
        let authentication = ChallengePurpose.authentication.rawValue
        let active = RegistrationStatus.active.rawValue
        if self.executor.hasDataModifyingWith {
            // One statement: atomic by itself, one round trip. Every part after `consumed` writes only if it has a row.
            return try await self.executor.withDatabase { db in
                try await db.hot(
                    """
                    WITH signer AS (
                        SELECT \(unsafeRaw: Self.joinedUserColumns)
                        FROM registrations r JOIN users u ON u.id = r.user_id
                        WHERE r.id = \(bind: registrationId) AND r.user_id = \(bind: session.userId) AND r.status = \(bind: active)
                    ), consumed AS (
                        UPDATE challenges SET consumed_at = \(bind: at.millis)
                        WHERE challenge = \(bind: challenge) AND registration_id = \(bind: registrationId)
                            AND purpose = \(bind: authentication) AND consumed_at IS NULL AND expires_at > \(bind: at.millis)
                            AND EXISTS (SELECT 1 FROM signer)
                        RETURNING challenge
                    ), used AS (
                        UPDATE registrations SET last_used_at = \(bind: at.millis), failed_attempts = 0
                        WHERE id = \(bind: registrationId) AND EXISTS (SELECT 1 FROM consumed)
                    )\(Self.sessionAndEvents(session, events, ifRowIn: "consumed"))
                    SELECT \(unsafeRaw: Self.signerColumns) FROM signer WHERE EXISTS (SELECT 1 FROM consumed)
                    """
                ).first.map { try UserRecord(row: PrefixedRow(base: $0, prefix: "user__")) }
            }
        }
        // SQLite: the conditions are the claiming statement's, and it returns the user (SQLite's RETURNING names only the
        // updated table's columns, but may hold subqueries): as many statements on the writer as a sign-in had before
        // its signature was checked first, and the row is decoded after the operation (they run one at a time).
        // `r.status = 'active'` is a literal, not a bound value: SQLite matches a bound value against the partial index
        // on active registrations by the value it holds, and then compiles the statement again whenever the value is
        // bound anew (every execution: measured as a parse per sign-in).
        let signer = try await self.executor.withTransaction { db -> (any SQLRow)? in
            guard
                let signer = try await db.hot(
                    """
                    UPDATE challenges SET consumed_at = \(bind: at.millis)
                    WHERE challenge = \(bind: challenge) AND registration_id = \(bind: registrationId)
                        AND purpose = \(bind: authentication) AND consumed_at IS NULL AND expires_at > \(bind: at.millis)
                        AND EXISTS (
                            SELECT 1 FROM registrations r JOIN users u ON u.id = r.user_id
                            WHERE r.id = \(bind: registrationId) AND r.user_id = \(bind: session.userId) AND r.status = 'active'
                        )
                    RETURNING \(Self.userSubqueries(id: session.userId))
                    """
                ).first
            else {
                return nil
            }
            _ = try await db.hot(
                "UPDATE registrations SET last_used_at = \(bind: at.millis), failed_attempts = 0 WHERE id = \(bind: registrationId)"
            )
            try await Self.insert(session, into: db)
            for event in events { try await Self.insert(event, into: db) }
            return signer
        }
        return try signer.map { try UserRecord(row: PrefixedRow(base: $0, prefix: "user__")) }
    }

    public func passkeyAndOwner(credentialId: String) async throws -> (passkey: PasskeyRecord, user: UserRecord?)? {
        try await self.executor.withReadOnlyDatabase { db in
            guard
                let row = try await db.hot(
                    """
                    SELECT \(unsafeRaw: Self.passkeyColumns),
                        \(unsafeRaw: Self.joinedUserColumns)
                    FROM passkeys p LEFT JOIN users u ON u.id = p.user_id
                    WHERE p.credential_id = \(bind: credentialId)
                    """
                ).first
            else {
                return nil
            }
            return (try PasskeyRecord(row: row), try UserRecord(joined: row, prefix: "user__"))
        }
    }
}

/// `table.column AS prefix+column, ...` for each of `columns`.
///
/// The hot statements name their columns instead of selecting `*`: a prepared statement keeps its result type, so a
/// migration that adds a column (run by another instance) must not change what it returns.
func selectList(_ columns: [String], table: String, prefix: String = "") -> String {
    columns.map { "\(table).\($0) AS \(prefix)\($0)" }.joined(separator: ", ")
}

extension RegistrationRecord {
    /// The columns ``init(row:)`` reads.
    static let columns = [
        "id", "user_id", "device_id", "device_name", "algorithm", "public_key", "key_fingerprint", "status", "created_at",
        "last_used_at", "status_changed_at", "app_attest_key_id", "failed_attempts", "pin_set_at", "pin_disabled_at",
        "key_attestation_level", "key_attestation_package",
    ]
}

extension SignInRegistrationRecord {
    /// The columns ``init(row:)`` reads, as a select list.
    static let columns = "id, user_id, status, algorithm, public_key"

    init(row: any SQLRow) throws {
        let encodedKey = try row.decode(column: "public_key", as: String.self)
        guard let publicKey = [UInt8](base64URL: encodedKey) else {
            throw StoreError.unavailable("stored public key is not base64url")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            status: try row.enumValue("status", as: RegistrationStatus.self),
            algorithm: try row.decode(column: "algorithm", as: String.self),
            publicKey: publicKey
        )
    }
}

extension PasskeyRecord {
    /// The columns ``init(row:)`` reads.
    static let columns = [
        "id", "credential_id", "user_id", "name", "public_key", "algorithm", "sign_count", "aaguid", "backup_eligible",
        "backed_up", "attestation_format", "attestation_type", "clone_warnings", "created_at", "last_used_at",
        "failed_attempts", "locked_at", "created_via", "attestation_key_id",
    ]
}

extension UserRecord {
    /// The columns ``init(row:)`` reads.
    static let columns = ["id", "email", "display_name", "password_hash", "created_at", "require_device_bound_passkeys"]

    /// The user of a left join whose user columns carry `prefix`; `nil` when the join found no user.
    init?(joined row: any SQLRow, prefix: String) throws {
        guard try row.decode(column: prefix + "id", as: String?.self) != nil else { return nil }
        try self.init(row: PrefixedRow(base: row, prefix: prefix))
    }
}

/// The columns of a joined row that carry a prefix, under their names without it.
struct PrefixedRow: SQLRow {
    let base: any SQLRow
    let prefix: String

    var allColumns: [String] {
        self.base.allColumns.compactMap { $0.hasPrefix(self.prefix) ? String($0.dropFirst(self.prefix.count)) : nil }
    }

    func contains(column: String) -> Bool { self.base.contains(column: self.prefix + column) }

    func decodeNil(column: String) throws -> Bool { try self.base.decodeNil(column: self.prefix + column) }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        try self.base.decode(column: self.prefix + column, as: type)
    }
}
