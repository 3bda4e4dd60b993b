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
    let (mailTransport, mailDescription) = try makeMailTransport(configuration, dependencies: dependencies)
    let mailer = try makeMailer(configuration, keyEncryptionKey: keyEncryptionKey, dependencies: dependencies)

    let store: any TouchstoneStore
    // One server per SQLite file: its lock is held until the store is closed (a second server on the file stops here).
    var fileLock: DatabaseFileLock?
    if let injected = dependencies.store {
        store = injected
    } else {
        if case .sqliteFile(let path) = configuration.database { fileLock = try DatabaseFileLock(database: path) }
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
    logger.info("\(mailDescription)")

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
    let subscriptions = WebhookSubscriptions()
    await subscriptions.refresh(from: store, logger: logger)
    let audit = AuditLog(
        store: store,
        secrets: Secrets(randomBytes: dependencies.randomBytes),
        now: dependencies.now,
        logger: logger,
        metrics: metrics,
        subscriptions: subscriptions,
        mailer: mailer
    )
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
    let core = ServerCore(
        configuration: configuration,
        dependencies: dependencies,
        store: store,
        logger: logger,
        policy: policy,
        audit: audit,
        ring: ring,
        relyingParty: relyingParty,
        metadata: metadata,
        mailer: mailer,
        keyEncryptionKey: keyEncryptionKey,
        dpopReplay: await DPoPGate.replayRecord(
            for: store, settings: configuration.dpop, clock: dependencies.now, randomBytes: dependencies.randomBytes, logger: logger
        )
    )
    // Apple push for sign-in requests, when configured (a key that cannot sign stops the start).
    var push: APNsPushNotifier?
    if let apns = configuration.phoneApproval.apns {
        do {
            push = try await APNsPushNotifier.make(apns, store: store, logger: logger, metrics: metrics)
        } catch {
            try? await store.shutdown()
            throw error
        }
        logger.info("push: Apple push to \(apns.url) for \(apns.topic)")
    }
    let features = makeFeatures(
        core: core,
        push: push,
        androidTrust: androidTrust,
        decoyKey: decoyKey,
        keyEncryptionKey: keyEncryptionKey,
        mailTransport: mailTransport
    )
    let router = buildRouter(core: core, features: features)
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Touchstone"),
        logger: logger
    )
    if let address = configuration.metricsAddress {
        // Metrics on a listener of their own (a port the load balancer does not route), started with the server.
        let metricsRouter = Router(options: .autoGenerateHeadEndpoints)
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
    app.addServices(StoreService(store: store, fileLock: fileLock))
    for feature in features { app.addServices(feature.services) }
    app.addServices(DeferredWorkService(work: core.deferred))
    return app
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

/// Every feature of the server, in the order their routes are added. A new feature is a folder of its own and one
/// line here (docs/architecture.md).
func makeFeatures(
    core: ServerCore,
    push: (any PushNotifier)? = nil,
    androidTrust: AndroidKeyAttestationTrust,
    decoyKey: SymmetricKey,
    keyEncryptionKey: SymmetricKey,
    mailTransport: any MailTransport
) -> [any Feature] {
    let integrity = DeviceIntegrityFeature(core: core, androidTrust: androidTrust)
    let pins = PinsFeature(core: core)
    let signInChallenges = SelfContainedChallenges(derivingFrom: keyEncryptionKey, purpose: BiometricService.challengePurpose)
    let passkeys = PasskeysFeature(
        core: core,
        decoyKey: decoyKey,
        challenges: SelfContainedChallenges(derivingFrom: keyEncryptionKey, purpose: PasskeyService.challengePurpose)
    )
    let phoneApproval = PhoneApprovalFeature(core: core, push: push)
    let deviceKeys = DeviceKeysFeature(core: core, challenges: signInChallenges, integrity: integrity, pins: pins.service)
    return [
        SystemFeature(core: core),
        WebFeature(core: core),
        AccountsFeature(core: core),
        deviceKeys,
        pins,
        integrity,
        passkeys,
        AdminFeature(core: core),
        ConfirmationsFeature(core: core, passkeys: passkeys.service),
        TokensFeature(core: core),
        OpenIDFeature(core: core, passkeys: passkeys.service, phoneApproval: phoneApproval.service),
        WebhooksFeature(core: core, keyEncryptionKey: keyEncryptionKey),
        MailFeature(core: core, transport: mailTransport, keyEncryptionKey: keyEncryptionKey),
        RecoveryFeature(core: core, passkeys: passkeys.service),
        phoneApproval,
        ReauthenticationFeature(core: core, passkeys: passkeys.service, deviceKeys: deviceKeys.service),
        SignUpFeature(core: core, passkeys: passkeys.service, deviceKeys: deviceKeys.service, integrity: integrity),
    ]
}

/// The router: the shared middleware (tracing, observation, errors, request limits, client info), then every
/// feature's routes.
func buildRouter(core: ServerCore, features: [any Feature]) -> Router<TouchstoneRequestContext> {
    let configuration = core.configuration
    let router = Router(context: TouchstoneRequestContext.self, options: .autoGenerateHeadEndpoints)
    if configuration.tracing.enabled {
        router.add(middleware: TracingMiddleware())
    }
    if let metrics = core.audit.metrics {
        router.add(
            middleware: RequestObservationMiddleware(
                metrics: metrics,
                trustedProxies: configuration.rateLimits.trustedProxies,
                randomBytes: core.dependencies.randomBytes
            )
        )
        if configuration.metricsAddress == nil {
            MetricsController(metrics: metrics, store: core.store, now: core.now).addRoutes(to: router)
        }
    }
    let allowedMethods = AllowedMethods()
    router.add(middleware: HeadMiddleware())
    router.add(middleware: ErrorMiddleware(allowed: allowedMethods))
    router.add(middleware: RequestLimitsMiddleware(limit: configuration.maxRequestBodySize))
    router.add(middleware: ClientInfoMiddleware(trustedProxies: configuration.rateLimits.trustedProxies))
    for feature in features { feature.addRoutes(to: router) }
    allowedMethods.load(from: router)
    return router
}
