import Hummingbird
import ServiceLifecycle

/// Health, configuration and the OpenAPI document, and the purge of expired rows.
struct SystemFeature: Feature {
    let core: ServerCore

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        SystemController(configuration: self.core.configuration, store: self.core.store, policy: self.core.policy).addRoutes(to: router)
    }

    var services: [any Service] {
        let configuration = self.core.configuration
        return [
            PurgeService(
                store: self.core.store,
                interval: configuration.purgeInterval,
                auditRetention: configuration.auditRetention,
                now: self.core.now,
                logger: self.core.logger
            )
        ]
    }
}
