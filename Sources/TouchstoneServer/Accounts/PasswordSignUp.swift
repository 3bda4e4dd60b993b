import Foundation
import TouchstoneStore
import TouchstoneWebhooks

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
        var created = self.audit.event(.userCreated, userId: user.id, webhookData: ["email": .string(user.email)])
        if let session = self.audit.webhook(
            "session.created",
            data: ["userId": .string(user.id), "method": .string("sign_up"), "registrationId": .null, "passkeyId": .null]
        ) {
            created.webhooks.append(session)
        }
        let event = created
        let (token, session) = self.sessions.make(for: user, method: .password)
        // The account, its event, its first session and its verification mail commit together or not at all.
        let verification = try await self.recovery.signUpVerification(for: user)
        do {
            try await self.store.unitOfWork { store in
                try await store.insertUser(user)
                try await store.insertAuditEvent(event)
                try await store.insertSession(session)
                if let (challenge, mail) = verification {
                    try await store.replaceEmailChallenge(challenge)
                    try await store.enqueueMail(mail)
                }
            }
        } catch let error as StoreError where error == .conflict {
            throw APIError.emailTaken
        }
        self.audit.committed([event])
        if verification != nil { self.recovery.mailer.committed() }
        return (user, token, session)
    }
}
