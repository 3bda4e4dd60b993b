import Hummingbird
import ServiceLifecycle
import TouchstoneWebAuthn

/// Sign-ins approved on a phone (issue #34): the browser's requests, the phone's reading and deciding, the device
/// channel (credential, push token), Apple push. The OpenID provider's CIBA endpoint uses ``service``.
struct PhoneApprovalFeature: Feature {
    let core: ServerCore
    let service: PhoneApprovalService
    /// Apple push, when configured.
    let apns: APNsPushNotifier?

    init(core: ServerCore, push: (any PushNotifier)?) {
        self.core = core
        self.apns = push as? APNsPushNotifier
        let configuration = core.configuration
        self.service = PhoneApprovalService(
            store: core.store,
            secrets: core.secrets,
            now: core.now,
            audit: core.audit,
            policy: core.policy,
            sessions: core.sessions,
            settings: configuration.phoneApproval,
            rpId: core.relyingParty.id,
            productName: configuration.passkeys.rpName,
            issuer: configuration.tokens.resolvedIssuer(port: configuration.port),
            signal: SignInRequestSignal(),
            push: push,
            deferred: core.deferred,
            logger: core.logger
        )
        let service = self.service
        core.deferred.register(PhoneApprovalService.pushWork) { lease in try await service.deliverPush(lease) }
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        PhoneApprovalController(service: self.service, store: self.core.store, limiter: self.core.limiter)
            .addRoutes(to: router, authenticator: self.core.authenticator)
    }

    var services: [any Service] { self.apns.map { [PushClientService(client: $0.client)] } ?? [] }
}
