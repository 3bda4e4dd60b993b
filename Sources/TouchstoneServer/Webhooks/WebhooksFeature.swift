import Crypto
import Foundation
import Hummingbird
import ServiceLifecycle

/// Webhooks for the app's backend (issue #32): the endpoints' admin API, and the dispatcher that delivers the
/// outbox the audit events fill (Standard Webhooks signatures, retries for about three days).
struct WebhooksFeature: Feature {
    let core: ServerCore
    let keyEncryptionKey: SymmetricKey
    let dispatcher: WebhookDispatcher
    let poster: WebhookPoster?

    init(core: ServerCore, keyEncryptionKey: SymmetricKey) {
        self.core = core
        self.keyEncryptionKey = keyEncryptionKey
        let settings = core.configuration.webhooks
        let poster = core.dependencies.postWebhook == nil
            ? WebhookPoster(policy: settings.destinations, connectionsPerHost: settings.concurrency) : nil
        self.poster = poster
        self.dispatcher = WebhookDispatcher(
            store: core.store,
            keyEncryptionKey: keyEncryptionKey,
            post: core.dependencies.postWebhook ?? { await poster!.post($0) },
            policy: settings.destinations,
            concurrency: settings.concurrency,
            audit: core.audit,
            logger: core.logger,
            now: core.now,
            randomBytes: core.dependencies.randomBytes,
            retention: TimeInterval(settings.retentionDays * 86_400)
        )
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        WebhookAdminController(
            store: self.core.store,
            dependencies: self.core.dependencies,
            audit: self.core.audit,
            policy: self.core.configuration.webhooks.destinations,
            keyEncryptionKey: self.keyEncryptionKey
        ).addRoutes(to: router)
    }

    var services: [any Service] { [WebhookDispatchService(dispatcher: self.dispatcher, poster: self.poster)] }
}
