import Hummingbird
import Logging
import ServiceLifecycle
import TouchstoneOpenID

/// The OpenID Connect provider: discovery, the authorization endpoint with its sign-in and consent pages, the token,
/// revocation, introspection and UserInfo endpoints, RP-initiated and back-channel logout, users' grants, and the
/// clients' registry (admin API).
struct OpenIDFeature: Feature {
    let core: ServerCore
    let provider: OpenIDProvider
    let passkeys: PasskeyService
    let backChannel: BackChannelLogout
    /// Starts and reads the phone approvals of CIBA requests.
    let phoneApproval: PhoneApprovalService

    init(core: ServerCore, passkeys: PasskeyService, phoneApproval: PhoneApprovalService) {
        self.core = core
        self.passkeys = passkeys
        self.phoneApproval = phoneApproval
        let configuration = core.configuration
        self.provider = OpenIDProvider(
            issuer: configuration.tokens.resolvedIssuer(port: configuration.port),
            store: core.store,
            ring: core.ring,
            secrets: core.secrets,
            now: core.now,
            audit: core.audit,
            audiences: configuration.tokens.resolvedAudiences(port: configuration.port),
            accessTokenLifetime: configuration.tokens.accessTokenLifetime.timeInterval,
            metrics: core.audit.metrics
        )
        self.backChannel = BackChannelLogout(
            provider: self.provider,
            logger: core.logger,
            post: core.dependencies.postForm ?? BackChannelLogout.livePost
        )
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        let core = self.core
        let cookies = BrowserCookies(issuer: self.provider.issuer)
        let pages = OpenIDPages(productName: core.configuration.passkeys.rpName)
        let tokens = TokenService(
            ring: core.ring,
            store: core.store,
            secrets: core.secrets,
            now: core.now,
            issuer: self.provider.issuer,
            audiences: self.provider.audiences,
            clientId: core.configuration.tokens.clientId,
            lifetime: self.provider.accessTokenLifetime,
            metrics: core.audit.metrics
        )
        var metadata = ProviderMetadata(issuer: self.provider.issuer, signingAlgorithms: [core.ring.algorithm.rawValue])
        metadata.dpop_signing_alg_values_supported = DPoPGate.algorithms
        DiscoveryController(metadata: metadata)
            .addRoutes(to: router)
        AuthorizationController(
            provider: self.provider,
            sessions: core.sessions,
            passwords: PasswordSignIn(store: core.store, hasher: core.hasher, limiter: core.limiter, audit: core.audit),
            passkeys: self.passkeys,
            limiter: core.limiter,
            cookies: cookies,
            pages: pages,
            signUp: PasswordSignUp(store: core.store, sessions: core.sessions, hasher: core.hasher, secrets: core.secrets, now: core.now,
                limiter: core.limiter, audit: core.audit, recovery: RecoveryService(core: core)),
            signUpEnabled: core.configuration.accounts.signUp,
            recovery: RecoveryService(core: core)
        ).addRoutes(to: router)
        TokenEndpointController(
            provider: self.provider,
            service: OpenIDTokenService(provider: self.provider),
            tokens: tokens,
            limiter: core.limiter,
            backchannel: BackchannelAuthentication(provider: self.provider, phoneApproval: self.phoneApproval, sessions: core.sessions),
            dpop: core.dpop
        ).addRoutes(to: router)
        LogoutController(provider: self.provider, sessions: core.sessions, cookies: cookies, pages: pages, limiter: core.limiter)
            .addRoutes(to: router)
        GrantController(store: core.store, audit: core.audit, now: core.now).addRoutes(to: router, authenticator: core.authenticator)
        ClientAdminController(store: core.store, dependencies: core.dependencies, audit: core.audit).addRoutes(to: router)
    }

    var services: [any Service] {
        let (backChannel, logger) = (self.backChannel, self.core.logger)
        return [
            PeriodicService(interval: .seconds(1)) {
                do {
                    try await backChannel.deliverDue()
                } catch {
                    logger.warning("back-channel logout delivery failed: \(error)")
                }
            }
        ]
    }
}
