public import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals
import TouchstoneCrypto
public import TouchstoneServer
import TouchstoneStore

extension DevicePolicy: ExpressibleByArgument {}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Touchstone server.",
        discussion: """
            Options override TOUCHSTONE_* environment variables, which override the defaults. The embedded SQLite \
            database is the default and needs nothing installed.
            """
    )

    @Option(name: .long, help: "Address to listen on (TOUCHSTONE_HOST). Default 127.0.0.1.")
    var host: String?

    @Option(name: .long, help: "Port to listen on; 0 picks a free one (TOUCHSTONE_PORT). Default 8080.")
    var port: Int?

    @Option(
        name: .long,
        help: "sqlite:PATH, sqlite::memory: or postgres://user:pass@host:5432/db (TOUCHSTONE_DATABASE_URL). Default sqlite:touchstone.sqlite."
    )
    var database: String?

    @Flag(name: .customLong("no-migrate"), help: "Do not run migrations on start (run `touchstone migrate` first).")
    var noMigrate = false

    @Option(name: .customLong("device-policy"), help: "multiDevice or singleDevice (TOUCHSTONE_DEVICE_POLICY).")
    var devicePolicy: DevicePolicy?

    @Option(name: .customLong("challenge-ttl"), help: "Seconds a challenge stays valid (TOUCHSTONE_CHALLENGE_TTL_SECONDS). Default 120.")
    var challengeTTL: Int?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error (TOUCHSTONE_LOG_LEVEL).")
    var logLevel: String?

    @Option(name: .customLong("rp-id"), help: "WebAuthn relying party id, the site's domain (TOUCHSTONE_RP_ID). Default localhost.")
    var rpId: String?

    @Option(name: .customLong("rp-name"), help: "WebAuthn relying party name (TOUCHSTONE_RP_NAME).")
    var rpName: String?

    @Option(name: .customLong("origin"), help: "An origin allowed for passkeys, repeatable (TOUCHSTONE_ORIGINS). Default http://localhost:PORT.")
    var origins: [String] = []

    func run() async throws {
        var configuration = try environmentConfiguration()
        if let host { configuration.host = host }
        if let port {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
            configuration.port = port
        }
        if let database { configuration.database = try parseDatabase(database) }
        if self.noMigrate { configuration.migrateOnStart = false }
        if let devicePolicy { configuration.devicePolicy = devicePolicy }
        if let rpId { configuration.passkeys.rpId = rpId }
        if let rpName { configuration.passkeys.rpName = rpName }
        if !self.origins.isEmpty { configuration.passkeys.origins = self.origins }
        if let challengeTTL {
            guard challengeTTL > 0 else { throw ValidationError("--challenge-ttl must be positive") }
            configuration.challengeTTL = .seconds(challengeTTL)
        }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("unknown --log-level \(logLevel)") }
            configuration.logLevel = level
        }
        // swift-log's text lines, rendered only when a line is written (TextLogHandler); once, for the process.
        LoggingSystem.bootstrap({ label, provider in TextLogHandler(label: label, metadataProvider: provider) }, metadataProvider: nil)
        var dependencies = TouchstoneDependencies.live
        // Tracing installs a process-wide tracer: done here, once, never by buildApplication (tests build many).
        if let exporter = try TouchstoneTracing.bootstrap(configuration.tracing, logger: Logger(label: "touchstone.otel")) {
            dependencies.services.append(exporter)
        }
        let app = try await buildApplication(configuration: configuration, dependencies: dependencies)
        // SIGTERM (or SIGINT): requests and background work in flight finish within the grace period, then whatever
        // is left is cancelled; work promised to clients is recorded, so what is cut short is done after a restart.
        var group = ServiceGroupConfiguration(services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownGrace
        group.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: group).run()
    }
}

/// The configuration from `TOUCHSTONE_*` variables, as a usage error when one is invalid.
func environmentConfiguration() throws -> TouchstoneConfiguration {
    do {
        return try TouchstoneConfiguration(environment: ProcessInfo.processInfo.environment)
    } catch {
        throw ValidationError("\(error)")
    }
}

func parseDatabase(_ text: String) throws -> DatabaseLocation {
    guard let location = DatabaseLocation(url: text) else {
        throw ValidationError("--database must be sqlite:PATH, sqlite::memory: or postgres://...")
    }
    return location
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring the database schema up to date, then exit.",
        discussion: "Safe to run from several hosts at once: on PostgreSQL an advisory lock serialises migrations."
    )

    @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
    var database: String?

    func run() async throws {
        var configuration = try environmentConfiguration()
        if let database { configuration.database = try parseDatabase(database) }
        var logger = Logger(label: "touchstone")
        logger.logLevel = configuration.logLevel
        let store = try await openStore(configuration.database, logger: logger)
        do {
            try await store.migrate()
        } catch {
            try? await store.shutdown()
            throw error
        }
        try await store.shutdown()
        logger.info("migrated \(configuration.database)")
    }
}
