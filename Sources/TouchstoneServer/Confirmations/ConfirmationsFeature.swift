import Hummingbird

/// Transaction confirmations: made by the app's backend, approved with the device key or a passkey.
struct ConfirmationsFeature: Feature {
    let core: ServerCore
    let passkeys: PasskeyService

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        let configuration = self.core.configuration
        ConfirmationController(
            service: ConfirmationService(
                store: self.core.store,
                secrets: self.core.secrets,
                now: self.core.now,
                ring: self.core.ring,
                audit: self.core.audit,
                policy: self.core.policy,
                relyingParty: self.core.relyingParty,
                passkeys: self.passkeys,
                issuer: configuration.tokens.resolvedIssuer(port: configuration.port),
                receiptAudiences: configuration.tokens.resolvedReceiptAudiences(port: configuration.port)
            ),
            authenticator: self.core.authenticator,
            store: self.core.store,
            limiter: self.core.limiter,
            passkeyTimeoutMilliseconds: Int(configuration.passkeys.timeout.components.seconds) * 1000
        ).addRoutes(to: router)
    }
}
