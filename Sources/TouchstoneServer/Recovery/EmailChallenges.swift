import Crypto
import Foundation
import TouchstoneCrypto
import TouchstoneStore

/// The codes and links mailed to users (issue #33): a 6-digit code and a link token (32 random bytes) per user and
/// purpose, the code stored as an HMAC under a key derived from the key-encryption key (bound to the user and the
/// purpose, so a stolen database gives no code without the key), the token as its SHA-256. A wrong code counts; the
/// fifth kills the challenge. A malformed code never reaches here (400 at the boundary, no attempt counted).
struct EmailChallenges: Sendable {
    let store: any TouchstoneStore
    let key: SymmetricKey
    let secrets: Secrets
    let now: @Sendable () -> Date
    let maximumAttempts: Int

    init(store: any TouchstoneStore, keyEncryptionKey: SymmetricKey, secrets: Secrets, now: @escaping @Sendable () -> Date, maximumAttempts: Int) {
        self.store = store
        self.key = HKDF<SHA256>.deriveKey(inputKeyMaterial: keyEncryptionKey, info: Array("touchstone email codes v1".utf8), outputByteCount: 32)
        self.secrets = secrets
        self.now = now
        self.maximumAttempts = maximumAttempts
    }

    /// A challenge ready to store, with the code and token that go into the mail (and nowhere else).
    struct Issued: Sendable {
        var record: EmailChallengeRecord
        var code: String
        var token: String
    }

    /// A new challenge for `purpose`, valid `ttl` from now; the caller stores it (``TouchstoneStore/replaceEmailChallenge(_:)``)
    /// in the unit of work that queues its mail.
    func issue(userId: String, purpose: EmailChallengePurpose, email: String, ttl: TimeInterval) -> Issued {
        let code = self.newCode()
        let token = self.secrets.newToken()
        let now = self.now()
        let record = EmailChallengeRecord(
            userId: userId,
            purpose: purpose,
            email: email,
            codeHash: self.hash(code: code, userId: userId, purpose: purpose),
            tokenHash: Secrets.hash(token: token),
            createdAt: now,
            expiresAt: now.addingTimeInterval(ttl)
        )
        return Issued(record: record, code: code, token: token)
    }

    /// Six decimal digits, uniform: a 32-bit value below the largest multiple of 10^6, modulo 10^6.
    func newCode() -> String {
        let limit = UInt32.max - UInt32.max % 1_000_000
        while true {
            let bytes = self.secrets.randomBytes(4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if value < limit {
                let digits = String(value % 1_000_000)
                return String(repeating: "0", count: 6 - digits.count) + digits
            }
        }
    }

    /// HMAC-SHA-256 over the purpose, the user and the code, as lowercase hex.
    func hash(code: String, userId: String, purpose: EmailChallengePurpose) -> String {
        let message = Array("\(purpose.rawValue)\u{0}\(userId)\u{0}\(code)".utf8)
        return Hex.encode(HMAC<SHA256>.authenticationCode(for: message, using: self.key))
    }

    /// Checks `code` against the user's live challenge of `purpose` and consumes it (once, whatever the race).
    ///
    /// A missing user (`userId` nil: an unknown address) does the same reads and comparison against nothing, so the
    /// answer and its cost say nothing about which addresses have accounts.
    ///
    /// - Throws: 400 `invalid_code` for no challenge, an expired or replaced one, or a wrong code (counted: the
    ///   ``maximumAttempts``-th wrong code deletes the challenge).
    func verify(code: String, userId: String?, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord {
        try await self.consume(try await self.check(code: code, userId: userId, purpose: purpose))
    }

    /// ``verify(code:userId:purpose:)`` without consuming: the challenge stays usable (a wrong code still counts). For
    /// a flow that consumes it later, in the unit of work of what it allows (a reset completed with a passkey).
    func check(code: String, userId: String?, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord {
        let now = self.now()
        let challenge = try await self.store.emailChallenge(userId: userId ?? "-", purpose: purpose)
        let presented = self.hash(code: code, userId: userId ?? "-", purpose: purpose)
        let stored = challenge?.codeHash ?? String(repeating: "0", count: 64)
        let matches = ConstantTime.equal(Array(presented.utf8), Array(stored.utf8))
        guard let userId, let challenge, challenge.expiresAt > now else { throw APIError.invalidCode }
        guard matches else {
            _ = try await self.store.recordEmailChallengeFailure(userId: userId, purpose: purpose, codeHash: challenge.codeHash, limit: self.maximumAttempts)
            throw APIError.invalidCode
        }
        return challenge
    }

    /// Consumes the challenge of `purpose` a link's token opens (once).
    ///
    /// - Throws: 400 `invalid_code` for an unknown, expired, replaced or used link, or one of another purpose.
    func verify(token: String, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord {
        try await self.consume(try await self.check(token: token, purpose: purpose))
    }

    /// ``verify(token:purpose:)`` without consuming.
    func check(token: String, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord {
        guard let challenge = try await self.store.emailChallenge(tokenHash: Secrets.hash(token: token)), challenge.purpose == purpose,
            challenge.expiresAt > self.now()
        else {
            throw APIError.invalidCode
        }
        return challenge
    }

    private func consume(_ challenge: EmailChallengeRecord) async throws -> EmailChallengeRecord {
        guard let consumed = try await self.store.consumeEmailChallenge(
            userId: challenge.userId, purpose: challenge.purpose, codeHash: challenge.codeHash, at: self.now())
        else {
            throw APIError.invalidCode
        }
        return consumed
    }
}
