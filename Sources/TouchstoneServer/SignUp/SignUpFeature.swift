import Hummingbird

/// Sign-ups without a password (issue #42): with a passkey. Password sign-up is `POST /v1/users` (Accounts).
struct SignUpFeature: Feature {
    let core: ServerCore
    let passkeys: PasskeyService

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        PasskeySignUpController(
            service: PasskeySignUpService(
                store: self.core.store,
                passkeys: self.passkeys,
                sessions: self.core.sessions,
                audit: self.core.audit,
                recovery: RecoveryService(core: self.core),
                now: self.core.now,
                enabled: self.core.configuration.accounts.signUp
            ),
            limiter: self.core.limiter
        ).addRoutes(to: router)
    }
}
