import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOSSL
import PostgresKit
import PostgresNIO
public import SQLKit

/// PostgreSQL, for several server instances sharing one database: a connection pool (postgres-nio's `PostgresClient`)
/// whose lifetime this executor owns.
///
/// Connection failures are reported as ``StoreError/unavailable(_:)`` (answered 503 by the server); the pool reconnects
/// by itself when the database comes back.
public final class PostgresExecutor: SQLExecutor {
    /// Where and how to connect, parsed from a `postgres://` URL.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String?
        public var database: String?
        /// `disable`, `prefer` (the default) or `require`.
        public var sslMode: String
        /// Sets `search_path`, to keep several deployments (or test runs) in one database.
        public var schema: String?
        public var maximumConnections: Int
        public var connectTimeout: Duration
        /// How long a request waits for a pooled connection before failing with ``StoreError/unavailable(_:)``
        /// (while the database is down, the pool keeps retrying in the background).
        public var acquireTimeout: Duration

        /// Parses `postgres://user:password@host:port/database?sslmode=require&schema=touchstone&pool=20`.
        ///
        /// - Throws: ``StoreError/unavailable(_:)`` naming what is wrong with the URL (never echoing the password).
        public init(url: String) throws {
            guard let components = URLComponents(string: url), let scheme = components.scheme,
                scheme == "postgres" || scheme == "postgresql"
            else {
                throw StoreError.unavailable("database URL must start with postgres://")
            }
            guard let host = components.host, !host.isEmpty else { throw StoreError.unavailable("database URL has no host") }
            guard let username = components.user, !username.isEmpty else {
                throw StoreError.unavailable("database URL has no user name")
            }
            self.host = host
            self.port = components.port ?? 5432
            self.username = username.removingPercentEncoding ?? username
            self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            self.database = path.isEmpty ? nil : path
            let query = Dictionary(
                (components.queryItems ?? []).map { ($0.name, $0.value ?? "") },
                uniquingKeysWith: { $1 }
            )
            self.sslMode = query["sslmode"] ?? "prefer"
            guard ["disable", "prefer", "require"].contains(self.sslMode) else {
                throw StoreError.unavailable("sslmode must be disable, prefer or require")
            }
            self.schema = query["schema"]
            if let schema = self.schema {
                guard !schema.isEmpty, schema.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw StoreError.unavailable("schema must be letters, digits and underscores")
                }
            }
            self.maximumConnections = Int(query["pool"] ?? "") ?? 20
            guard self.maximumConnections >= 1 else { throw StoreError.unavailable("pool must be at least 1") }
            self.connectTimeout = .seconds(Int(query["connect_timeout"] ?? "") ?? 5)
            self.acquireTimeout = .milliseconds(Int((Double(query["acquire_timeout"] ?? "") ?? 5) * 1000))
        }
    }

    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let logger: Logger
    private let acquireTimeout: Duration

    private init(client: PostgresClient, acquireTimeout: Duration, logger: Logger) {
        self.client = client
        self.logger = logger
        self.acquireTimeout = acquireTimeout
        self.runTask = Task { await client.run() }
    }

    /// Starts the pool. Nothing connects until the first query.
    public static func open(_ configuration: Configuration, logger: Logger) throws -> PostgresExecutor {
        let tls: PostgresClient.Configuration.TLS
        switch configuration.sslMode {
        case "disable": tls = .disable
        case "require": tls = .require(.makeClientConfiguration())
        default: tls = .prefer(.makeClientConfiguration())
        }
        var clientConfiguration = PostgresClient.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.username,
            password: configuration.password,
            database: configuration.database,
            tls: tls
        )
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        clientConfiguration.options.connectTimeout = configuration.connectTimeout
        if let schema = configuration.schema {
            clientConfiguration.options.additionalStartupParameters = [("search_path", schema)]
        }
        return PostgresExecutor(
            client: PostgresClient(configuration: clientConfiguration, backgroundLogger: logger),
            acquireTimeout: configuration.acquireTimeout,
            logger: logger
        )
    }

    public func withDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        // The task group in withConnection awaits its children, so `body` never outlives this call.
        try await withoutActuallyEscaping(body) { body in
            try await self.withConnection { connection in
                try await body(connection.sql(queryLogLevel: .trace))
            }
        }
    }

    public func withTransaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await withoutActuallyEscaping(body) { body in
            try await self.withConnection { connection in
                try await self.transaction(on: connection.sql(queryLogLevel: .trace), begin: "BEGIN", body)
            }
        }
    }

    /// Leases a pooled connection, giving up after ``Configuration/acquireTimeout`` while none can be had; only the
    /// wait for a connection is timed, never the work done with it.
    private func withConnection<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let client = self.client
        let timeout = self.acquireTimeout
        let acquired = NIOLockedValueBox(false)
        return try await self.reportingUnavailability {
            try await withThrowingTaskGroup(of: R?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        acquired.withLockedValue { $0 = true }
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    guard acquired.withLockedValue({ $0 }) else {
                        throw StoreError.unavailable("no database connection within \(timeout)")
                    }
                    return nil
                }
                while let next = try await group.next() {
                    if let result = next {
                        group.cancelAll()
                        return result
                    }
                }
                throw StoreError.unavailable("database operation ended without a result")
            }
        }
    }

    /// Serialises migrations across instances that start at the same time.
    public var migrationLock: SQLQueryString? {
        // An arbitrary constant key, "tchstone" in ASCII: held until the migration transaction ends.
        "SELECT pg_advisory_xact_lock(8387236455436332645)"
    }

    public func isUniqueViolation(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        return error.serverInfo?[.sqlState] == "23505"
    }

    /// Closes the pool. Waits at most `gracePeriod` for it: a database that vanished mid-connection must not keep the
    /// process from exiting.
    public func shutdown() async throws {
        self.runTask.cancel()
        let runTask = self.runTask
        let finished = NIOLockedValueBox(false)
        let logger = self.logger
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeOnce = { @Sendable in
                let first = finished.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume() }
            }
            Task {
                await runTask.value
                resumeOnce()
            }
            Task {
                try? await Task.sleep(for: Self.gracePeriod)
                if !finished.withLockedValue({ $0 }) { logger.warning("PostgreSQL pool did not close within \(Self.gracePeriod)") }
                resumeOnce()
            }
        }
    }

    static let gracePeriod: Duration = .seconds(5)

    /// Turns "cannot talk to the database" into ``StoreError/unavailable(_:)``; leaves query errors as they are.
    private func reportingUnavailability<R>(_ body: () async throws -> R) async throws -> R {
        do {
            return try await body()
        } catch let error as PSQLError where error.code != .server {
            throw StoreError.unavailable("PostgreSQL: \(error.code)")
        } catch let error as PSQLError where Self.isUnavailabilityState(error.serverInfo?[.sqlState]) {
            throw StoreError.unavailable("PostgreSQL: \(error.serverInfo?[.message] ?? "unavailable")")
        }
    }

    /// SQLSTATE classes that mean the server cannot serve now: 08 connection exception, 53 insufficient resources,
    /// 57P operator intervention (shutdown, crash recovery).
    private static func isUnavailabilityState(_ state: String?) -> Bool {
        guard let state else { return false }
        return state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P")
    }
}
