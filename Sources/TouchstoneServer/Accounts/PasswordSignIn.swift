import Foundation
import TouchstoneStore

/// A password sign-in's checks, shared by the JSON API (`POST /v1/sessions`) and the OpenID provider's sign-in page:
/// the limits, the constant-time verification, the lockout counters, and the audit of failures.
struct PasswordSignIn: Sendable {
    let store: any TouchstoneStore
    let hasher: PasswordHasher
    let limiter: RateLimiter
    let audit: AuditLog

    /// Checks `password` for `email`, then runs `signedIn` with the user (it opens or updates the session); failures
    /// of either are recorded in the audit trail as failed password sign-ins.
    ///
    /// - Throws: 401 `invalid_credentials` for an unknown address or a wrong password (the same answer, the same
    ///   work), and the limiter's 429s.
    func signIn<T>(
        email: String,
        password: InputRules.Password,
        client: ClientInfo,
        signedIn: (UserRecord) async throws -> T
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
                try await self.limiter.loginFailed(email: email)
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
            let result = try await signedIn(user)
            try await self.audit.record(.passwordLogin, userId: user.id)
            return result
        }
    }
}
