public import Foundation

/// A mail waiting in the queue (issue #33). The message (envelope and text) is sealed under the key-encryption key:
/// the store never holds a link or a code in clear. A mail is deleted once the SMTP server accepted it.
public struct QueuedMailRecord: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, Codable {
        /// Waiting for its next attempt.
        case pending
        /// Given up (a permanent refusal, or every attempt failed); the sealed message is gone, the row stays for the
        /// operator until the retention ends.
        case failed
    }

    public var id: String
    /// What the mail is (`verify_email`, `password_reset`...): for logs and metrics, never its content.
    public var kind: String
    /// The sealed message; empty once failed.
    public var sealedMessage: [UInt8]
    public var createdAt: Date
    public var state: State
    /// Attempts made so far.
    public var attempts: Int
    public var nextAttemptAt: Date?
    public var lastError: String?

    public init(id: String, kind: String, sealedMessage: [UInt8], createdAt: Date) {
        self.id = id
        self.kind = kind
        self.sealedMessage = sealedMessage
        self.createdAt = createdAt
        self.state = .pending
        self.attempts = 0
        self.nextAttemptAt = createdAt
        self.lastError = nil
    }
}

/// What became of one attempt to hand a queued mail over.
public enum MailAttemptOutcome: Sendable, Hashable {
    /// Accepted by the server: the mail is deleted.
    case sent
    /// Try again at this time.
    case retry(at: Date, error: String)
    /// Give up: the sealed message is deleted, the row kept as `failed`.
    case failed(error: String)
}

/// The mail queue at a glance.
public struct MailQueueStatistics: Sendable, Hashable {
    public var pending: Int
    public var failed: Int
    /// The creation time of the oldest pending mail.
    public var oldestPendingAt: Date?

    public init(pending: Int, failed: Int, oldestPendingAt: Date?) {
        self.pending = pending
        self.failed = failed
        self.oldestPendingAt = oldestPendingAt
    }
}

/// What a code or link sent by mail proves.
public enum EmailChallengePurpose: String, Sendable, Hashable, Codable, CaseIterable {
    /// The account's address is the user's (sign-up, resend).
    case verifyEmail = "verify_email"
    /// A password reset.
    case passwordReset = "password_reset"
    /// A sign-in by a code mailed to the address.
    case signInCode = "sign_in_code"
    /// A new address for the account (the challenge's ``EmailChallengeRecord/email`` is the new one).
    case changeEmail = "change_email"
}

/// A code and a link mailed to a user: at most one per user and purpose (a new one replaces the last). Only a keyed
/// hash of the code and a hash of the link's token are stored.
public struct EmailChallengeRecord: Sendable, Hashable {
    public var userId: String
    public var purpose: EmailChallengePurpose
    /// The address the mail went to (for a change, the new address).
    public var email: String
    /// HMAC-SHA-256 of the code under a key derived from the key-encryption key, bound to the user and purpose (hex).
    public var codeHash: String
    /// SHA-256 of the link's token (hex).
    public var tokenHash: String
    /// Wrong codes so far.
    public var attempts: Int
    public var createdAt: Date
    public var expiresAt: Date

    public init(userId: String, purpose: EmailChallengePurpose, email: String, codeHash: String, tokenHash: String, createdAt: Date, expiresAt: Date) {
        self.userId = userId
        self.purpose = purpose
        self.email = email
        self.codeHash = codeHash
        self.tokenHash = tokenHash
        self.attempts = 0
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
