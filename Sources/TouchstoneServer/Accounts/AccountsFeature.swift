import Hummingbird

/// Sign-up, password sign-in, the current session, its audit trail, password changes, the user's list of sessions, and deleting the account.
struct AccountsFeature: Feature {
    let core: ServerCore

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        AccountController(
            store: self.core.store,
            sessions: self.core.sessions,
            hasher: self.core.hasher,
            secrets: self.core.secrets,
            now: self.core.now,
            limiter: self.core.limiter,
            audit: self.core.audit,
            reauthenticationWindow: self.core.reauthenticationWindow,
            recovery: RecoveryService(core: self.core),
            signUpEnabled: self.core.configuration.accounts.signUp
        ).addRoutes(to: router, authenticator: self.core.authenticator)
        OwnAccountController(
            store: self.core.store,
            sessions: self.core.sessions,
            secrets: self.core.secrets,
            audit: self.core.audit,
            now: self.core.now,
            reauthenticationWindow: self.core.reauthenticationWindow
        ).addRoutes(to: router, authenticator: self.core.authenticator)
        SessionListController(
            store: self.core.store,
            secrets: self.core.secrets,
            audit: self.core.audit,
            now: self.core.now
        ).addRoutes(to: router, authenticator: self.core.authenticator)
    }
}
