public import Foundation

/// Challenges: issued (enrolment) or answered (sign-in), each answerable exactly once however many callers race; the sign-in that answers one commits its session and events with it.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol ChallengeLedger: Sendable {
    func insertChallenge(_ challenge: ChallengeRecord) async throws

    /// Records a sign-in challenge answered by a failed attempt (stored as consumed at `at`), so that it is never
    /// answered again. Sign-in challenges are not stored when issued: they carry their own binding and expiry (see
    /// `SelfContainedChallenges`); `challenge.expiresAt` is how long the record must be kept.
    ///
    /// - Returns: Whether it was recorded now: `false` when a challenge with this value is recorded already (another
    ///   attempt answered it first) or the registration does not exist.
    func recordAnsweredChallenge(_ challenge: ChallengeRecord, at: Date) async throws -> Bool

    /// Completes a biometric sign-in whose signature was verified, atomically, if everything else it needs still holds:
    /// no challenge with this value has been answered; the registration is active and belongs to `session.userId`; the
    /// user exists. Then it records the challenge as answered (consumed at `at`; it is not stored before: see
    /// ``recordAnsweredChallenge(_:at:)``), records the registration's use (clearing its failed-signature count) and
    /// stores `session` and `events` (the sign-in's audit trail), in one transaction. The challenge's authenticity and
    /// expiry are the caller's to check first.
    ///
    /// - Returns: The user, or `nil` when a condition failed (another attempt answered the challenge first, the
    ///   registration was revoked...): then nothing was written.
    func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, events: [AuditEventRecord], at: Date)
        async throws -> UserRecord?

    /// Atomically consumes the newest unconsumed challenge of a registration for `purpose`.
    func consumeLatestChallenge(registrationId: String, purpose: ChallengePurpose, at: Date) async throws
        -> ChallengeRecord?

    /// Stores a WebAuthn challenge.
    func insertWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord) async throws

    /// Records a passkey sign-in challenge answered by a failed attempt (stored as consumed at `at`), so that it is
    /// never answered again. Passkey sign-in challenges are not stored when issued (they carry their own expiry under a
    /// MAC); `challenge.expiresAt` is how long the record must be kept.
    ///
    /// - Returns: Whether it was recorded now (`false`: a challenge with this value is recorded already).
    func recordAnsweredWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord, at: Date) async throws -> Bool

    /// Atomically consumes the unconsumed WebAuthn challenge with this value and purpose.
    func consumeWebAuthnChallenge(_ challenge: String, purpose: ChallengePurpose, at: Date) async throws
        -> WebAuthnChallengeRecord?
}
