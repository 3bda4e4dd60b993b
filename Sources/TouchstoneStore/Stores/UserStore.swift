public import Foundation

/// Accounts: users, their password hashes and passkey policy.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol UserStore: Sendable {
    /// Inserts a user. Throws ``StoreError/conflict(_:)`` when the email is taken.
    func insertUser(_ user: UserRecord) async throws
    func user(id: String) async throws -> UserRecord?

    /// Looks a user up by normalised email.
    func user(email: String) async throws -> UserRecord?

    /// Sets whether the user's passkeys must be device-bound; false when there is no such user.
    func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool

    /// Users, newest first, optionally only those whose email contains `emailContaining`, after the user `afterId`.
    func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord]

    /// Replaces a user's password hash (`nil` removes the password); returns whether the user exists.
    func updatePassword(userId: String, passwordHash: String?) async throws -> Bool

    /// Locks the user's row until the unit of work ends, so that changes to the account's credentials are serialised
    /// (two requests can never both remove "the other" last credential); returns whether the user exists. Call it
    /// first in a unit of work, then read ``credentials(userId:)``.
    func lockUser(id: String) async throws -> Bool

    /// What the account can sign in with: a password, passkeys that are not locked, active device keys.
    func credentials(userId: String) async throws -> CredentialSummary

    /// Deletes a user with everything that belongs to it (sessions, registrations, passkeys, confirmations, OpenID
    /// codes, tokens and consents); the audit trail keeps its events. Returns whether the user existed.
    ///
    /// The user's live sessions end at `at` first, in the same transaction, and every back-channel logout owed to an
    /// OpenID client for them (or still owed from earlier) is kept as a notice that outlives the account, so the
    /// clients still hear that the sessions ended.
    func deleteUser(id: String, at: Date) async throws -> Bool
}
