import Crypto
import Hummingbird
import ServiceLifecycle
import TouchstoneCrypto

/// Passkeys (WebAuthn): registration, sign-in, management, the association files apps and related sites read, and
/// the authenticator metadata kept fresh in the background.
struct PasskeysFeature: Feature {
    let core: ServerCore
    let service: PasskeyService

    init(core: ServerCore, decoyKey: SymmetricKey, challenges: SelfContainedChallenges) {
        self.core = core
        self.service = PasskeyService(
            store: core.store,
            sessions: core.sessions,
            secrets: core.secrets,
            now: core.now,
            relyingParty: core.relyingParty,
            keys: ParsedValueCache(capacity: core.configuration.keyCacheSize),
            settings: core.configuration.passkeys,
            reauthenticationWindow: core.reauthenticationWindow,
            policy: core.policy,
            audit: core.audit,
            logger: core.logger,
            decoyKey: decoyKey,
            metadata: core.metadata,
            challenges: challenges
        )
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        AppAssociationController(settings: self.core.configuration.passkeys).addRoutes(to: router)
        PasskeyController(
            service: self.service,
            store: self.core.store,
            limiter: self.core.limiter,
            audit: self.core.audit
        ).addRoutes(to: router, authenticator: self.core.authenticator)
    }

    var services: [any Service] {
        let metadata = self.core.metadata
        return [PeriodicService(interval: self.core.configuration.metadata.checkInterval) { await metadata.refresh() }]
    }
}
