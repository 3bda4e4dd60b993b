import Hummingbird

/// Verified addresses and the ways back into an account (issue #33): email verification, password reset, sign-in by
/// mailed code, address change, recovery codes.
struct RecoveryFeature: Feature {
    let service: RecoveryService
    let passkeys: PasskeyService

    init(core: ServerCore, passkeys: PasskeyService) {
        self.service = RecoveryService(core: core)
        self.passkeys = passkeys
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        RecoveryController(service: self.service, passkeyReset: PasskeyReset(recovery: self.service, passkeys: self.passkeys))
            .addRoutes(to: router, authenticator: self.core.authenticator)
    }

    var core: ServerCore { self.service.core }
}
