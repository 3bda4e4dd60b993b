import Hummingbird

/// Verified addresses and the ways back into an account (issue #33): email verification, password reset, sign-in by
/// mailed code, address change, recovery codes.
struct RecoveryFeature: Feature {
    let service: RecoveryService
    let passkeys: PasskeyService

    init(core: ServerCore, passkeys: PasskeyService) {
        let service = RecoveryService(core: core)
        self.service = service
        self.passkeys = passkeys
        for kind in [RecoveryService.passwordResetWork, RecoveryService.signInCodeWork] {
            core.deferred.register(kind) { lease in try await service.fulfil(lease) }
        }
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        RecoveryController(service: self.service, passkeyReset: PasskeyReset(recovery: self.service, passkeys: self.passkeys))
            .addRoutes(to: router, authenticator: self.core.authenticator)
    }

    var core: ServerCore { self.service.core }
}
