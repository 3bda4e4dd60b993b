public import Foundation

/// Verified addresses and the ways back into an account (issue #33): mailed codes and links, and recovery codes.
///
/// Every consuming method succeeds at most once per code, however many callers race.
public protocol RecoveryStore: Sendable {
    /// Stores a challenge, replacing the user's previous one of the same purpose (whose code and link stop working).
    func replaceEmailChallenge(_ challenge: EmailChallengeRecord) async throws
    /// The user's challenge of `purpose`, expired or not.
    func emailChallenge(userId: String, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord?
    /// The challenge whose link token hashes to `tokenHash`.
    func emailChallenge(tokenHash: String) async throws -> EmailChallengeRecord?
    /// Deletes and returns the user's challenge of `purpose` if its code hash is still `codeHash` and it is unexpired at
    /// `at`: of concurrent callers, one gets it.
    func consumeEmailChallenge(userId: String, purpose: EmailChallengePurpose, codeHash: String, at: Date) async throws -> EmailChallengeRecord?
    /// Counts a wrong code against the challenge whose code hash is `codeHash`; when the count reaches `limit` the
    /// challenge is deleted. Returns the count, or nil when there is no such challenge.
    func recordEmailChallengeFailure(userId: String, purpose: EmailChallengePurpose, codeHash: String, limit: Int) async throws -> Int?
    /// Deletes the user's challenge of `purpose`, if any.
    func deleteEmailChallenge(userId: String, purpose: EmailChallengePurpose) async throws
    /// Marks the user's address verified at `at`, if the account's address is still `email`; returns whether it did.
    func markEmailVerified(userId: String, email: String, at: Date) async throws -> Bool
    /// Gives the account a new (verified) address; false when there is no such user. Throws
    /// ``StoreError/conflict(_:)`` when another account has it.
    func changeEmail(userId: String, to email: String, at: Date) async throws -> Bool
    /// Replaces the user's recovery codes with these hashes (every earlier code stops working).
    func replaceRecoveryCodes(userId: String, codeHashes: [String], at: Date) async throws
    /// Uses the unused recovery code with this hash; returns whether it was there and unused (once per code).
    func useRecoveryCode(userId: String, codeHash: String, at: Date) async throws -> Bool
    /// The user's recovery codes not yet used.
    func unusedRecoveryCodeCount(userId: String) async throws -> Int
}
