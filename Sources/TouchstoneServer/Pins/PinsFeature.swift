import Hummingbird

/// The app PIN: sign-in with it (here) and setting or removing it (routes of the registration, in ``DeviceKeysFeature``).
struct PinsFeature: Feature {
    let core: ServerCore
    let service: PinService

    init(core: ServerCore) {
        self.core = core
        self.service = PinService(
            store: core.store,
            sessions: core.sessions,
            hasher: core.hasher,
            policy: core.policy,
            audit: core.audit,
            now: core.now,
            reauthenticationWindow: core.reauthenticationWindow
        )
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        PinController(pins: self.service, limiter: self.core.limiter).addRoutes(to: router)
    }
}
