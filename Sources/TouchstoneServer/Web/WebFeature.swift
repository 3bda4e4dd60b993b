import Hummingbird

/// The web page and the admin console's files.
struct WebFeature: Feature {
    let core: ServerCore

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        WebController(origin: self.core.configuration.passkeys.origins.first, signUp: self.core.configuration.accounts.signUp)
            .addRoutes(to: router)
    }
}
