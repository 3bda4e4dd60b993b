import Hummingbird

/// The OpenID Connect provider (issue #31, in progress): so far its clients' registry through the admin API.
struct OpenIDFeature: Feature {
    let core: ServerCore

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        ClientAdminController(store: self.core.store, dependencies: self.core.dependencies, audit: self.core.audit).addRoutes(to: router)
    }
}
