public import Foundation
import SQLKit

/// The reads of a sign-in's finish, joined: one statement (one round trip on PostgreSQL, one read transaction on
/// SQLite) instead of one per record, and the records come from one snapshot.
extension SQLTouchstoneStore {
    public func signInAttempt(registrationId: String, challenge: String) async throws -> SignInAttemptRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            guard
                let row = try await db.hot(
                    """
                    SELECT \(unsafeRaw: Self.registrationColumns),
                        \(unsafeRaw: Self.joinedUserColumns),
                        c.challenge AS answered_challenge
                    FROM registrations r
                    LEFT JOIN users u ON u.id = r.user_id
                    LEFT JOIN challenges c ON c.challenge = \(bind: challenge)
                    WHERE r.id = \(bind: registrationId)
                    """
                ).first
            else {
                return nil
            }
            return SignInAttemptRecord(
                registration: try RegistrationRecord(row: row),
                user: try UserRecord(joined: row, prefix: "user__"),
                challengeUsed: try row.decode(column: "answered_challenge", as: String?.self) != nil
            )
        }
    }

    public func signInRegistration(id: String) async throws -> SignInRegistrationRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.hot("SELECT \(unsafeRaw: SignInRegistrationRecord.columns) FROM registrations WHERE id = \(bind: id)")
                .first.map(SignInRegistrationRecord.init(row:))
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

    /// Completes a sign-in (see the protocol): on PostgreSQL one statement, on SQLite one transaction on the writer.
    public func completeSignIn(
        challenge: ChallengeRecord,
        session: SessionRecord,
        events: [AuditEventRecord],
        at: Date
    ) async throws -> UserRecord? {
        let registrationId = challenge.registrationId
        if self.executor.hasDataModifyingWith {
            // One statement: atomic by itself, one round trip. Every part after `answered` writes only if it has a row;
            // of concurrent attempts with one challenge, the first inserts it and the others find it (ON CONFLICT).
            return try await self.executor.withDatabase { db in
                try await db.hot(
                    """
                    WITH signer AS (
                        SELECT \(unsafeRaw: Self.joinedUserColumns)
                        FROM registrations r JOIN users u ON u.id = r.user_id
                        WHERE r.id = \(bind: registrationId) AND r.user_id = \(bind: session.userId)
                            AND r.status = \(bind: RegistrationStatus.active.rawValue)
                    ), answered AS (
                        INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at, consumed_at)
                        SELECT \(bind: challenge.challenge), \(bind: registrationId), \(bind: challenge.purpose.rawValue),
                            \(bind: challenge.createdAt.millis), \(bind: challenge.expiresAt.millis), \(bind: at.millis)
                        FROM signer
                        ON CONFLICT (challenge) DO NOTHING
                        RETURNING challenge
                    ), used AS (
                        UPDATE registrations SET last_used_at = \(bind: at.millis), failed_attempts = 0
                        WHERE id = \(bind: registrationId) AND EXISTS (SELECT 1 FROM answered)
                    )\(Self.sessionAndEvents(session, events, ifRowIn: "answered"))
                    SELECT \(unsafeRaw: Self.signerColumns) FROM signer WHERE EXISTS (SELECT 1 FROM answered)
                    """
                ).first.map { try UserRecord(row: PrefixedRow(base: $0, prefix: "user__")) }
            }
        }
        // SQLite: the conditions are the recording statement's, and it returns the user (SQLite's RETURNING names only
        // the inserted table's columns, but may hold subqueries): three statements and the events on the writer, and the
        // row is decoded after the operation (they run one at a time). `r.status = 'active'` is a literal, not a bound
        // value: SQLite matches a bound value against the partial index on active registrations by the value it holds,
        // and then compiles the statement again whenever the value is bound anew (every execution: measured as a parse
        // per sign-in). `WHERE` before `ON CONFLICT` is what SQLite needs to read the upsert of an `INSERT ... SELECT`.
        let signer = try await self.executor.withTransaction { db -> (any SQLRow)? in
            guard
                let signer = try await db.hot(
                    """
                    INSERT INTO challenges (challenge, registration_id, purpose, created_at, expires_at, consumed_at)
                    SELECT \(bind: challenge.challenge), r.id, \(bind: challenge.purpose.rawValue), \(bind: challenge.createdAt.millis),
                        \(bind: challenge.expiresAt.millis), \(bind: at.millis)
                    FROM registrations r JOIN users u ON u.id = r.user_id
                    WHERE r.id = \(bind: registrationId) AND r.user_id = \(bind: session.userId) AND r.status = 'active'
                    ON CONFLICT (challenge) DO NOTHING
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

    public func passkeySignInAttempt(credentialId: String, challenge: String) async throws -> PasskeySignInAttemptRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            guard
                let row = try await db.hot(
                    """
                    SELECT \(unsafeRaw: Self.passkeyColumns),
                        \(unsafeRaw: Self.joinedUserColumns),
                        w.challenge AS answered_challenge
                    FROM passkeys p
                    LEFT JOIN users u ON u.id = p.user_id
                    LEFT JOIN webauthn_challenges w ON w.challenge = \(bind: challenge)
                    WHERE p.credential_id = \(bind: credentialId)
                    """
                ).first
            else {
                return nil
            }
            return PasskeySignInAttemptRecord(
                passkey: try PasskeyRecord(row: row),
                user: try UserRecord(joined: row, prefix: "user__"),
                challengeUsed: try row.decode(column: "answered_challenge", as: String?.self) != nil
            )
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
        "key_attestation_level", "key_attestation_package", "proof_jkt",
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
    static let columns = ["id", "email", "display_name", "password_hash", "created_at", "require_device_bound_passkeys", "email_verified_at"]

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
