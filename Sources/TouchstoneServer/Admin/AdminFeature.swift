import Hummingbird
import ServiceLifecycle

/// The admin API (admin key) and the runtime policy every instance reloads.
struct AdminFeature: Feature {
    let core: ServerCore

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        AdminController(
            store: self.core.store,
            policy: self.core.policy,
            audit: self.core.audit,
            now: self.core.now,
            metadata: self.core.metadata
        ).addRoutes(to: router)
    }

    var services: [any Service] {
        let (policy, store, logger) = (self.core.policy, self.core.store, self.core.logger)
        return [PeriodicService(interval: self.core.configuration.policyRefreshInterval) { await policy.reload(from: store, logger: logger) }]
    }
}
