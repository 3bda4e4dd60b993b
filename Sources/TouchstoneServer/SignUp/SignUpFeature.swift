import Hummingbird

/// Sign-ups without a password (issue #42): with a passkey, or from the phone with a device key. Password sign-up is
/// `POST /v1/users` (Accounts).
struct SignUpFeature: Feature {
    let core: ServerCore
    let passkeys: PasskeyService
    let deviceKeys: BiometricService
    let integrity: DeviceIntegrityFeature

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        let recovery = RecoveryService(core: self.core)
        let enabled = self.core.configuration.accounts.signUp
        PasskeySignUpController(
            service: PasskeySignUpService(
                store: self.core.store,
                passkeys: self.passkeys,
                sessions: self.core.sessions,
                audit: self.core.audit,
                recovery: recovery,
                now: self.core.now,
                enabled: enabled
            ),
            limiter: self.core.limiter
        ).addRoutes(to: router)
        let configuration = self.core.configuration
        DeviceKeySignUpController(
            service: DeviceKeySignUpService(
                store: self.core.store,
                deviceKeys: self.deviceKeys,
                integrity: EnrolmentIntegrity(
                    appAttest: self.integrity.appAttest,
                    androidKeyAttestation: self.integrity.androidKeyAttestation,
                    requireAppAttest: configuration.appAttest.required,
                    requireAndroidKeyAttestation: configuration.androidKeyAttestation.required
                ),
                sessions: self.core.sessions,
                audit: self.core.audit,
                recovery: recovery,
                now: self.core.now,
                enabled: enabled
            ),
            limiter: self.core.limiter
        ).addRoutes(to: router)
    }
}
