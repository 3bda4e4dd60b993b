import Foundation
import TouchstoneStore

/// Sign-up with a password, shared by `POST /v1/users` and the OpenID provider's sign-in page: the account, its event
/// (with the `session.created` webhook), its first session and its verification mail commit together or not at all.
struct PasswordSignUp: Sendable {
    let store: any TouchstoneStore
    let sessions: SessionManager
    let hasher: PasswordHasher
    let secrets: Secrets
    let now: @Sendable () -> Date
    let limiter: RateLimiter
    let audit: AuditLog
    /// Mails the new account's verification code and link (issue #33).
    let recovery: RecoveryService

    /// - Throws: 409 `email_taken`; the limiter's 429.
    func signUp(email: String, password: InputRules.Password, displayName: String?) async throws -> (UserRecord, String, SessionRecord) {
        try await self.limiter.checkAccount("account:\(email)")
        let user = UserRecord(
            id: self.secrets.newIdentifier(),
            email: email,
            displayName: displayName,
            passwordHash: try await self.hasher.hash(password),
            createdAt: self.now()
        )
        let (token, session) = self.sessions.make(for: user, method: .password)
        try await NewAccount(store: self.store, audit: self.audit, recovery: self.recovery).commit(user: user, session: session, how: nil)
        return (user, token, session)
    }
}
