public import Foundation

/// Sign-ups without a password, between their start and their finish (issue #42). The account itself is created in
/// the finish's unit of work (``UserStore/insertUser(_:)`` with its credential, session and events).
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol SignUpStore: Sendable {
    func insertPendingSignUp(_ signUp: PendingSignUpRecord) async throws

    /// Removes and returns the pending sign-up `id` of `kind`, expired or not (the caller refuses an expired one);
    /// `nil` when there is none: unknown, of another kind, or consumed already. Exactly one of concurrent calls gets it.
    func consumePendingSignUp(id: String, kind: PendingSignUpRecord.Kind) async throws -> PendingSignUpRecord?
}
