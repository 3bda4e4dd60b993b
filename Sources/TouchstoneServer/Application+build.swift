public import Hummingbird
import Crypto
import Foundation
import TouchstoneWebAuthn
import TouchstoneCrypto
import X509
import OTel
public import Logging
public import CoreMetrics
public import TouchstoneStore

/// Builds the Touchstone application: opens and migrates the store, wires the controllers, adds the background
/// services.
///
/// ```swift
/// let app = try await buildApplication(configuration: TouchstoneConfiguration(environment: env))
/// try await app.runService()
/// ```
///
/// - Parameters:
///   - configuration: Address, database, policies and limits.
///   - dependencies: Clock, randomness and optionally a ready store; tests inject their own.
public func buildApplication(
    configuration: TouchstoneConfiguration,
    dependencies: TouchstoneDependencies = .live
) async throws -> some ApplicationProtocol {
    // Every time the server reads is rounded to the store's precision (milliseconds) once, here: what a response
    // says and what a later read of the stored object says are then the same instant (issue #29, item 2).
    var dependencies = dependencies
    let clock = dependencies.now
    dependencies.now = { Date(millis: clock().millis) }
    var logger: Logger
    if let injected = dependencies.logger {
        logger = injected
    } else {
        // With tracing on, every line written within a request's span carries its trace_id and span_id.
        let provider: Logger.MetadataProvider? = configuration.tracing.enabled ? OTel.makeLoggingMetadataProvider() : nil
        if configuration.logFormat == .json {
            logger = Logger(label: "touchstone") { label in
                var handler = JSONLogHandler(label: label)
                handler.metadataProvider = provider
                return handler
            }
        } else {
            logger = provider.map { Logger(label: "touchstone", metadataProvider: $0) } ?? Logger(label: "touchstone")
        }
    }
    logger.logLevel = configuration.logLevel
    let metrics = ServerMetrics(now: dependencies.now())

    // Configuration that cannot work is refused before anything is opened.
    let keyEncryptionKey = try KeyEncryptionKey.resolve(configuration, randomBytes: dependencies.randomBytes, logger: logger)

    let store: any TouchstoneStore
    if let injected = dependencies.store {
        store = injected
    } else {
        // The database drivers log every statement with its bound values below info: password and PIN hashes,
        // token hashes, stored keys. Those lines never reach the log, whatever the configured level.
        var storeLogger = logger
        storeLogger.logLevel = max(logger.logLevel, .info)
        store = try await openStore(
            configuration.database,
            sqliteCommitBatch: configuration.sqliteCommitBatch,
            metrics: metrics.factory,
            logger: storeLogger
        )
    }
    if configuration.migrateOnStart {
        do {
            try await store.migrate()
        } catch {
            try? await store.shutdown()
            throw error
        }
    }
    logger.info("storage: \(configuration.database)")

    let relyingParty: RelyingParty
    let androidTrust: AndroidKeyAttestationTrust
    do {
        relyingParty = try makeRelyingParty(configuration)
        androidTrust = try AndroidKeyAttestationTrust(configuration.androidKeyAttestation)
    } catch {
        try? await store.shutdown()
        throw error
    }
    let policy = PolicyProvider(defaults: RuntimePolicy(configuration: configuration))
    await policy.reload(from: store, logger: logger)
    // Authenticator metadata: the stored BLOB, or a configured file, now; a URL is fetched in the background.
    let metadata = AuthenticatorMetadataService(
        settings: configuration.metadata,
        store: store,
        now: dependencies.now,
        logger: logger,
        metrics: metrics
    )
    await metadata.refresh(download: false)
    let decoyKey = await loadDecoyKey(store: store, dependencies: dependencies, logger: logger)
    let secrets = Secrets(randomBytes: dependencies.randomBytes)
    let audit = AuditLog(store: store, secrets: secrets, now: dependencies.now, logger: logger, metrics: metrics)
    let ring: SigningKeyRing
    do {
        ring = try await openSigningKeyRing(
            configuration: configuration,
            keyEncryptionKey: keyEncryptionKey,
            dependencies: dependencies,
            store: store,
            audit: audit,
            logger: logger
        )
    } catch {
        try? await store.shutdown()
        throw error
    }
    let router = buildRouter(
        configuration: configuration,
        dependencies: dependencies,
        store: store,
        relyingParty: relyingParty,
        androidTrust: androidTrust,
        metadata: metadata,
        policy: policy,
        decoyKey: decoyKey,
        signInChallenges: SelfContainedChallenges(derivingFrom: keyEncryptionKey, purpose: BiometricService.challengePurpose),
        passkeyChallenges: SelfContainedChallenges(derivingFrom: keyEncryptionKey, purpose: PasskeyService.challengePurpose),
        audit: audit,
        ring: ring,
        logger: logger
    )
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Touchstone"),
        logger: logger
    )
    if let address = configuration.metricsAddress {
        // Metrics on a listener of their own (a port the load balancer does not route), started with the server.
        let metricsRouter = Router()
        MetricsController(metrics: metrics, store: store, now: dependencies.now).addRoutes(to: metricsRouter)
        app.addServices(
            Application(
                router: metricsRouter,
                configuration: .init(address: .hostname(address.host, port: address.port), serverName: "Touchstone metrics"),
                logger: logger
            )
        )
    }
    app.addServices(dependencies.services)
    // Graceful shutdown runs in reverse order: the HTTP server first (draining requests), then the services that use
    // the store, and the store itself last, so nothing is left waiting on a closed database client.
    app.addServices(
        StoreService(store: store),
        PurgeService(
            store: store,
            interval: configuration.purgeInterval,
            auditRetention: configuration.auditRetention,
            now: dependencies.now,
            logger: logger
        ),
        PeriodicService(interval: configuration.policyRefreshInterval) { [logger] in await policy.reload(from: store, logger: logger) },
        PeriodicService(interval: configuration.metadata.checkInterval) { await metadata.refresh() },
        PeriodicService(interval: .seconds(60)) { [logger] in
            do {
                try await ring.maintain()
            } catch {
                logger.warning("signing key rotation check failed: \(error)")
            }
        }
    )
    return app
}

/// The token-signing key set: its key-encryption key resolved, the keys the schedule says are due made, and every
/// stored key checked to open with the key-encryption key (a server with the wrong key refuses to start). A database
/// that does not answer now is left to the rotation service and the first token request.
func openSigningKeyRing(
    configuration: TouchstoneConfiguration,
    keyEncryptionKey: SymmetricKey,
    dependencies: TouchstoneDependencies,
    store: any TouchstoneStore,
    audit: AuditLog,
    logger: Logger
) async throws -> SigningKeyRing {
    let ring = SigningKeyRing(
        store: store,
        settings: configuration.tokens,
        keyEncryptionKey: keyEncryptionKey,
        now: dependencies.now,
        audit: audit,
        logger: logger
    )
    do {
        try await ring.checkKeysOpen()
        try await ring.maintain()
    } catch let error as KeyEncryptionKeyError {
        throw error
    } catch {
        logger.warning("token signing keys not loaded at start (the database did not answer): \(error)")
    }
    return ring
}

/// The key of the decoy credential ids, shared by every instance through the database (created by the first).
/// Without a database (it is down at start) a random key serves this process: its decoys then differ from the other
/// instances' until a restart, which only weakens the decoys.
func loadDecoyKey(store: any TouchstoneStore, dependencies: TouchstoneDependencies, logger: Logger) async -> SymmetricKey {
    let name = "decoy_credential_key"
    do {
        if let stored = try await store.setting(name: name), let bytes = Base64.decode(stored), bytes.count == 32 {
            return SymmetricKey(data: bytes)
        }
        _ = try await store.insertSetting(name: name, value: Base64.urlEncode(dependencies.randomBytes(32)), at: dependencies.now())
        // Another instance may have stored its own first: everyone uses the one stored.
        if let stored = try await store.setting(name: name), let bytes = Base64.decode(stored), bytes.count == 32 {
            return SymmetricKey(data: bytes)
        }
    } catch {
        logger.warning("decoy credential key could not be loaded: \(error)")
    }
    return SymmetricKey(data: dependencies.randomBytes(32))
}

/// Opens the store a database location names; nothing is migrated.
public func openStore(
    _ location: DatabaseLocation,
    sqliteCommitBatch: Int = SQLiteExecutor.defaultCommitBatch,
    metrics: (any MetricsFactory)? = nil,
    logger: Logger
) async throws -> any TouchstoneStore {
    switch location {
    case .sqliteFile(let path):
        return try await SQLTouchstoneStore.sqlite(.file(path: path), commitBatch: sqliteCommitBatch, metrics: metrics, logger: logger)
    case .sqliteMemory:
        return try await SQLTouchstoneStore.sqlite(.memory, commitBatch: sqliteCommitBatch, metrics: metrics, logger: logger)
    case .postgres(let url): return try SQLTouchstoneStore.postgres(.init(url: url), metrics: metrics, logger: logger)
    }
}

/// Builds the router with every route of the API.
func buildRouter(
    configuration: TouchstoneConfiguration,
    dependencies: TouchstoneDependencies,
    store: any TouchstoneStore,
    relyingParty: RelyingParty,
    androidTrust: AndroidKeyAttestationTrust,
    metadata: AuthenticatorMetadataService,
    policy: PolicyProvider,
    decoyKey: SymmetricKey,
    signInChallenges: SelfContainedChallenges,
    passkeyChallenges: SelfContainedChallenges,
    audit: AuditLog,
    ring: SigningKeyRing,
    logger: Logger
) -> Router<TouchstoneRequestContext> {
    let secrets = audit.secrets
    let now = dependencies.now
    let sessions = SessionManager(store: store, secrets: secrets, now: now, policy: policy)
    let limiter = RateLimiter(settings: configuration.rateLimits, store: store, buckets: AddressBuckets(), audit: audit, now: now)
    let hasher = PasswordHasher(cost: configuration.bcryptCost)
    let reauthenticationWindow = configuration.reauthenticationWindow.timeInterval
    let biometrics = BiometricService(
        store: store,
        sessions: sessions,
        secrets: secrets,
        keys: DevicePublicKeyCache(capacity: configuration.keyCacheSize),
        signers: ParsedValueCache(capacity: configuration.keyCacheSize),
        challenges: signInChallenges,
        now: now,
        configuration: configuration,
        policy: policy,
        audit: audit
    )
    let pins = PinService(
        store: store,
        sessions: sessions,
        hasher: hasher,
        policy: policy,
        audit: audit,
        now: now,
        reauthenticationWindow: reauthenticationWindow
    )
    let authenticator = SessionAuthenticator(sessions: sessions)

    let router = Router(context: TouchstoneRequestContext.self)
    if configuration.tracing.enabled {
        router.add(middleware: TracingMiddleware())
    }
    if let metrics = audit.metrics {
        router.add(
            middleware: RequestObservationMiddleware(
                metrics: metrics,
                trustedProxies: configuration.rateLimits.trustedProxies,
                randomBytes: dependencies.randomBytes
            )
        )
        if configuration.metricsAddress == nil {
            MetricsController(metrics: metrics, store: store, now: now).addRoutes(to: router)
        }
    }
    let allowedMethods = AllowedMethods()
    router.add(middleware: ErrorMiddleware(allowed: allowedMethods))
    router.add(middleware: RequestLimitsMiddleware(limit: configuration.maxRequestBodySize))
    router.add(middleware: ClientInfoMiddleware(trustedProxies: configuration.rateLimits.trustedProxies))

    SystemController(configuration: configuration, store: store, policy: policy).addRoutes(to: router)
    WebController(origin: configuration.passkeys.origins.first).addRoutes(to: router)
    AppAssociationController(settings: configuration.passkeys).addRoutes(to: router)
    AccountController(
        store: store,
        sessions: sessions,
        hasher: hasher,
        secrets: secrets,
        now: now,
        limiter: limiter,
        audit: audit,
        reauthenticationWindow: reauthenticationWindow
    ).addRoutes(to: router, authenticator: authenticator)
    let appAttest = AppAttestService(
        store: store,
        secrets: secrets,
        now: now,
        settings: configuration.appAttest,
        challengeTTL: configuration.challengeTTL.timeInterval
    )
    BiometricRegistrationController(
        service: biometrics,
        appAttest: appAttest,
        requireAppAttest: configuration.appAttest.required,
        androidKeyAttestation: AndroidKeyAttestationService(
            store: store,
            secrets: secrets,
            now: now,
            challengeTTL: configuration.challengeTTL.timeInterval,
            apps: configuration.passkeys.androidApps,
            trust: androidTrust
        ),
        requireAndroidKeyAttestation: configuration.androidKeyAttestation.required,
        store: store,
        pins: pins,
        limiter: limiter,
        audit: audit
    ).addRoutes(to: router, authenticator: authenticator)
    BiometricAuthenticationController(service: biometrics, limiter: limiter, audit: audit).addRoutes(to: router)
    PinController(pins: pins, limiter: limiter).addRoutes(to: router)
    AppAttestController(service: appAttest, limiter: limiter).addRoutes(to: router)
    let passkeys = PasskeyService(
        store: store,
        sessions: sessions,
        secrets: secrets,
        now: now,
        relyingParty: relyingParty,
        keys: ParsedValueCache(capacity: configuration.keyCacheSize),
        settings: configuration.passkeys,
        reauthenticationWindow: reauthenticationWindow,
        policy: policy,
        audit: audit,
        logger: logger,
        decoyKey: decoyKey,
        metadata: metadata,
        challenges: passkeyChallenges
    )
    PasskeyController(
        service: passkeys,
        store: store,
        limiter: limiter,
        audit: audit
    ).addRoutes(to: router, authenticator: authenticator)
    AdminController(store: store, policy: policy, audit: audit, now: now, metadata: metadata).addRoutes(to: router)
    ConfirmationController(
        service: ConfirmationService(
            store: store,
            secrets: secrets,
            now: now,
            ring: ring,
            audit: audit,
            policy: policy,
            relyingParty: relyingParty,
            passkeys: passkeys,
            issuer: configuration.tokens.resolvedIssuer(port: configuration.port),
            receiptAudiences: configuration.tokens.resolvedReceiptAudiences(port: configuration.port)
        ),
        sessions: sessions,
        store: store,
        limiter: limiter,
        passkeyTimeoutMilliseconds: Int(configuration.passkeys.timeout.components.seconds) * 1000
    ).addRoutes(to: router)
    TokenController(
        tokens: TokenService(
            ring: ring,
            store: store,
            secrets: secrets,
            now: now,
            issuer: configuration.tokens.resolvedIssuer(port: configuration.port),
            audiences: configuration.tokens.resolvedAudiences(port: configuration.port),
            clientId: configuration.tokens.clientId,
            lifetime: configuration.tokens.accessTokenLifetime.timeInterval,
            metrics: audit.metrics
        ),
        ring: ring,
        store: store,
        jwksMaxAge: Int(configuration.tokens.jwksMaxAge.components.seconds)
    ).addRoutes(to: router, authenticator: authenticator)
    allowedMethods.load(from: router)
    return router
}

/// What Android key attestation trusts, from the settings: the roots file (if any) replaces Google's roots, and the
/// status list file must be readable now.
struct AndroidKeyAttestationTrust: Sendable {
    var roots: [Certificate]
    var statusList: AttestationStatusFile?

    init(_ settings: AndroidKeyAttestationSettings) throws {
        self.roots = settings.trustAnchors
        if let path = settings.rootsFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError("TOUCHSTONE_ANDROID_ATTESTATION_ROOTS", path)
            }
            guard let certificates = RelyingParty.trustAnchors(pem: text) else {
                throw ConfigurationError("TOUCHSTONE_ANDROID_ATTESTATION_ROOTS (not PEM certificates)", path)
            }
            self.roots = certificates
        }
        self.statusList = try settings.statusFile.map { path in
            do {
                return try AttestationStatusFile(path: path)
            } catch {
                throw AttestationStatusFileError(path: path, underlying: error)
            }
        }
    }
}

/// The WebAuthn relying party from the settings: origins default to `http://localhost:<port>`; trust anchors are read
/// from their PEM files.
func makeRelyingParty(_ configuration: TouchstoneConfiguration) throws -> RelyingParty {
    let settings = configuration.passkeys
    let origins = (settings.origins.isEmpty ? ["http://localhost:\(configuration.port)"] : settings.origins) + settings.relatedOrigins
        + settings.androidApps.map(\.origin)
    var relyingParty = RelyingParty(id: settings.rpId, name: settings.rpName, origins: origins)
    relyingParty.allowCrossOrigin = settings.allowCrossOrigin
    relyingParty.allowedTopOrigins = settings.allowedTopOrigins
    relyingParty.userVerification = settings.userVerification
    relyingParty.algorithms = settings.algorithms
    relyingParty.minimumAttestation = settings.minimumAttestation
    relyingParty.rejectCounterRegression = settings.rejectCounterRegression
    relyingParty.refusedStatuses = configuration.metadata.refusedStatuses
    relyingParty.requireCertifiedAuthenticators = configuration.metadata.requireCertified
    relyingParty.trustAnchors = try settings.trustAnchorFiles.flatMap { path -> [Certificate] in
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("trust anchor file", path)
        }
        guard let certificates = RelyingParty.trustAnchors(pem: text) else {
            throw ConfigurationError("trust anchor file (not PEM certificates)", path)
        }
        return certificates
    }
    return relyingParty
}
