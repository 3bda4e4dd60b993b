import Hummingbird

/// Fresh strong authentication (issue #42): proving a password, a passkey or a device key again in a live session.
struct ReauthenticationFeature: Feature {
    let core: ServerCore
    let passkeys: PasskeyService
    let deviceKeys: BiometricService

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        ReauthenticationController(
            service: ReauthenticationService(
                store: self.core.store,
                sessions: self.core.sessions,
                passwords: PasswordSignIn(store: self.core.store, hasher: self.core.hasher, limiter: self.core.limiter, audit: self.core.audit),
                passkeys: self.passkeys,
                deviceKeys: self.deviceKeys,
                audit: self.core.audit,
                now: self.core.now
            ),
            limiter: self.core.limiter
        ).addRoutes(to: router, authenticator: self.core.authenticator)
    }
}
