import Crypto
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TouchstoneStore
import TouchstoneWebAuthn

/// One feature of the server (accounts, device keys, passkeys, ...): its routes and the background services it needs.
///
/// Every feature folder has one type that conforms, built from the ``ServerCore`` in ``buildRouter(core:)``; adding
/// a feature is a folder of its own and one line in that list (docs/architecture.md walks through it).
protocol Feature: Sendable {
    /// Adds the feature's routes.
    func addRoutes(to router: Router<TouchstoneRequestContext>)
    /// Background work the feature needs while the server runs (refreshes, clean-ups); none by default.
    var services: [any Service] { get }
}

extension Feature {
    var services: [any Service] { [] }
}

/// What every feature shares: the settings, the clock and randomness, the store, and the cross-cutting services
/// (sessions, rate limits, the audit trail, the runtime policy, the signing keys, the relying party).
struct ServerCore: Sendable {
    let configuration: TouchstoneConfiguration
    let dependencies: TouchstoneDependencies
    let store: any TouchstoneStore
    let logger: Logger
    let policy: PolicyProvider
    let audit: AuditLog
    let ring: SigningKeyRing
    let relyingParty: RelyingParty
    let metadata: AuthenticatorMetadataService
    let sessions: SessionManager
    let limiter: RateLimiter
    let hasher: PasswordHasher
    let authenticator: SessionAuthenticator
    /// Queues mail in a unit of work (issue #33); the mail feature sends it.
    let mailer: Mailer
    /// DPoP proofs (RFC 9449) for the token endpoints and the routes that take bound tokens.
    let dpop: DPoPGate
    /// Work a route promises before it answers, done from its record (issue #44 item 1).
    let deferred: DeferredWork

    var now: @Sendable () -> Date { self.dependencies.now }
    var secrets: Secrets { self.audit.secrets }
    var reauthenticationWindow: TimeInterval { self.configuration.reauthenticationWindow.timeInterval }
    var challengeTTL: TimeInterval { self.configuration.challengeTTL.timeInterval }

    init(
        configuration: TouchstoneConfiguration,
        dependencies: TouchstoneDependencies,
        store: any TouchstoneStore,
        logger: Logger,
        policy: PolicyProvider,
        audit: AuditLog,
        ring: SigningKeyRing,
        relyingParty: RelyingParty,
        metadata: AuthenticatorMetadataService,
        mailer: Mailer,
        keyEncryptionKey: SymmetricKey,
        dpopReplay: DPoPGate.ReplayRecord
    ) {
        self.mailer = mailer
        self.configuration = configuration
        self.dependencies = dependencies
        self.store = store
        self.logger = logger
        self.policy = policy
        self.audit = audit
        self.ring = ring
        self.relyingParty = relyingParty
        self.metadata = metadata
        var sessions = SessionManager(store: store, secrets: audit.secrets, now: dependencies.now, policy: policy)
        sessions.requireVerifiedEmail = configuration.recovery.requireVerifiedEmail
        self.sessions = sessions
        self.limiter = RateLimiter(settings: configuration.rateLimits, store: store, buckets: AddressBuckets(), audit: audit, now: dependencies.now)
        self.hasher = PasswordHasher(cost: configuration.bcryptCost)
        self.dpop = DPoPGate(
            settings: configuration.dpop,
            issuer: configuration.tokens.issuer,
            defaultIssuer: configuration.tokens.resolvedIssuer(port: configuration.port),
            keyEncryptionKey: keyEncryptionKey,
            store: store,
            replay: dpopReplay,
            metrics: audit.metrics,
            now: dependencies.now
        )
        self.authenticator = SessionAuthenticator(sessions: self.sessions, dpop: self.dpop)
        self.deferred = DeferredWork(store: store, logger: logger, now: dependencies.now, randomBytes: dependencies.randomBytes)
    }
}
