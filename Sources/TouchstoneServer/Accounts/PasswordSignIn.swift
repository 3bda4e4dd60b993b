import Foundation
import TouchstoneStore

/// A password sign-in's checks, shared by the JSON API (`POST /v1/sessions`) and the OpenID provider's sign-in page:
/// the limits, the constant-time verification, the lockout counters, and the audit of failures.
struct PasswordSignIn: Sendable {
    let store: any TouchstoneStore
    let hasher: PasswordHasher
    let limiter: RateLimiter
    let audit: AuditLog

    /// Checks `password` for `email`, then runs `signedIn` with the user and a unit of work (it opens or updates the
    /// session there, and says whether it opened one); the sign-in's event (and its `session.created` webhook when a
    /// session was opened), or `event` when given (a re-authentication's), commits in the same unit. Failures of
    /// either are recorded as failed password sign-ins.
    ///
    /// - Throws: 401 `invalid_credentials` for an unknown address or a wrong password (the same answer, the same
    ///   work), and the limiter's 429s.
    func signIn<T: Sendable>(
        email: String,
        password: InputRules.Password,
        client: ClientInfo,
        event success: AuditEventRecord? = nil,
        signedIn: @escaping @Sendable (UserRecord, any TouchstoneStore) async throws -> (T, sessionCreated: Bool)
    ) async throws -> T {
        // Limits and throttling are keyed by the (normalised) email whether or not such an account exists, so that
        // they reveal nothing about which accounts exist.
        let user = try await self.store.user(email: email)
        return try await self.audit.failures(.passwordLogin, userId: user?.id) {
            try await self.limiter.checkFailedCredentials(client: client)
            try await self.limiter.checkAccount("account:\(email)", userId: user?.id)
            try await self.limiter.checkLogin(email: email)
            let verification = try await self.hasher.verify(password, hash: user?.passwordHash)
            guard verification != .mismatch, let user else {
                if try await self.limiter.loginFailed(email: email), let user {
                    // The account's password sign-in now waits: its user hears of it (someone may be guessing).
                    try await self.audit.record(.passwordThrottled, .info, userId: user.id, notify: user.email)
                }
                try await self.limiter.credentialCheckFailed(client: client, userId: user?.id)
                throw APIError.invalidCredentials
            }
            if verification == .matchNeedingRehash {
                // A hash from before the pre-hashing scheme: replace it now that the password is known.
                _ = try await self.store.updatePassword(userId: user.id, passwordHash: try await self.hasher.hash(password))
            }
            try await self.limiter.loginSucceeded(email: email)
            // A password sign-in gives back the PINs that too many wrong attempts disabled.
            for registrationId in try await self.store.reenablePins(userId: user.id) {
                try await self.audit.record(.pinReenabled, .info, userId: user.id, registrationId: registrationId)
            }
            let opened = self.audit.event(.passwordLogin, userId: user.id)
            let updated = { var event = opened; event.webhooks = []; return event }()
            let (result, event) = try await self.store.unitOfWork { tx in
                let (result, sessionCreated) = try await signedIn(user, tx)
                let event = success ?? (sessionCreated ? opened : updated)
                try await tx.insertAuditEvent(event)
                return (result, event)
            }
            self.audit.committed([event])
            return result
        }
    }
}
