import Hummingbird

/// Verified addresses and the ways back into an account (issue #33): email verification, password reset, sign-in by
/// mailed code, address change, recovery codes.
struct RecoveryFeature: Feature {
    let service: RecoveryService

    init(core: ServerCore) {
        self.service = RecoveryService(core: core)
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        RecoveryController(service: self.service).addRoutes(to: router, authenticator: self.core.authenticator)
    }

    var core: ServerCore { self.service.core }
}
