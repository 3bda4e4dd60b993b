import Hummingbird

/// The web page and the admin console's files.
struct WebFeature: Feature {
    let core: ServerCore

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        WebController(origin: self.core.configuration.passkeys.origins.first).addRoutes(to: router)
    }
}
