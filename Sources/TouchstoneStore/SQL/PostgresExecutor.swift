import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore
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
        /// Whether the statements of the sign-in paths run as named prepared statements (parsed and planned once per
        /// connection). Turn off behind a pooler that does not keep prepared statements per client (PgBouncer in
        /// transaction mode before 1.21): `prepared_statements=false`.
        public var preparedStatements: Bool

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
            switch query["prepared_statements"] {
            case nil, "true": self.preparedStatements = true
            case "false": self.preparedStatements = false
            default: throw StoreError.unavailable("prepared_statements must be true or false")
            }
        }
    }

    /// One connection pool and the task that runs it. After an outage the pool is replaced by a fresh one, so that no
    /// request meets a connection that died with the database or waits out the old pool's reconnection back-off.
    private struct Pool: Sendable {
        let client: PostgresClient
        let runTask: Task<Void, Never>

        init(_ configuration: PostgresClient.Configuration, logger: Logger) {
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            self.client = client
            self.runTask = Task { await client.run() }
        }
    }

    private let pool: NIOLockedValueBox<Pool>
    private let clientConfiguration: PostgresClient.Configuration
    private let probeConfiguration: PostgresConnection.Configuration
    private let logger: Logger
    private let acquireTimeout: Duration
    private let preparedStatements: Bool
    /// Open while the database is known to be unreachable: requests then fail at once with
    /// ``StoreError/unavailable(_:)`` instead of each waiting for a connection.
    let breaker = CircuitBreaker()
    private let monitor: NIOLockedValueBox<Task<Void, Never>?> = NIOLockedValueBox(nil)

    /// How often the monitor checks a healthy database through the pool, and probes an unreachable one directly.
    static let healthInterval: Duration = .seconds(1)
    static let probeInterval: Duration = .milliseconds(200)

    private init(
        clientConfiguration: PostgresClient.Configuration,
        probeConfiguration: PostgresConnection.Configuration,
        acquireTimeout: Duration,
        preparedStatements: Bool,
        logger: Logger
    ) {
        self.preparedStatements = preparedStatements
        self.clientConfiguration = clientConfiguration
        self.probeConfiguration = probeConfiguration
        self.logger = logger
        self.acquireTimeout = acquireTimeout
        self.pool = NIOLockedValueBox(Pool(clientConfiguration, logger: logger))
        // Holds the executor only during a step, so an executor that is dropped without shutdown() stops being watched.
        self.monitor.withLockedValue {
            $0 = Task { [weak self] in
                while !Task.isCancelled, let self { await self.monitorStep() }
            }
        }
    }

    /// Starts the pool. Nothing connects until the first query.
    public static func open(_ configuration: Configuration, logger: Logger) throws -> PostgresExecutor {
        let tls: PostgresClient.Configuration.TLS
        let probeTLS: PostgresConnection.Configuration.TLS
        switch configuration.sslMode {
        case "disable":
            tls = .disable
            probeTLS = .disable
        case "require":
            tls = .require(.makeClientConfiguration())
            probeTLS = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        default:
            tls = .prefer(.makeClientConfiguration())
            probeTLS = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
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
        var probeConfiguration = PostgresConnection.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.username,
            password: configuration.password,
            database: configuration.database,
            tls: probeTLS
        )
        probeConfiguration.options.connectTimeout = .seconds(min(2, Int64(configuration.connectTimeout.components.seconds) + 1))
        if let schema = configuration.schema {
            clientConfiguration.options.additionalStartupParameters = [("search_path", schema)]
            probeConfiguration.options.additionalStartupParameters = [("search_path", schema)]
        }
        return PostgresExecutor(
            clientConfiguration: clientConfiguration,
            probeConfiguration: probeConfiguration,
            acquireTimeout: configuration.acquireTimeout,
            preparedStatements: configuration.preparedStatements,
            logger: logger
        )
    }

    public func withDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        // The task group in withConnection awaits its children, so `body` never outlives this call.
        try await withoutActuallyEscaping(body) { body in
            try await self.withConnection { connection in
                try await body(self.database(on: connection))
            }
        }
    }

    public func withTransaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await withoutActuallyEscaping(body) { body in
            try await self.withConnection { connection in
                try await self.transaction(
                    on: self.database(on: connection),
                    begin: "BEGIN",
                    body
                )
            }
        }
    }

    /// The connection as SQLKit's database; hot statements as named prepared statements unless turned off.
    private func database(on connection: PostgresConnection) -> any SQLDatabase {
        let base = connection.sql(queryLogLevel: .trace)
        return self.preparedStatements ? PostgresPreparingDatabase(connection: connection, base: base) : base
    }

    /// Answers from the circuit breaker, which the monitor keeps current (every ``healthInterval`` while the database
    /// answers): a readiness probe never waits for a connection.
    public func checkHealth() async throws {
        if let reason = self.breaker.openReason {
            throw StoreError.unavailable("PostgreSQL is unreachable: \(reason)")
        }
    }

    /// Leases a pooled connection, giving up after ``Configuration/acquireTimeout`` while none can be had; only the
    /// wait for a connection is timed, never the work done with it. While the breaker is open it fails at once; an
    /// unavailability opens it.
    private func withConnection<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        if let reason = self.breaker.openReason {
            throw StoreError.unavailable("PostgreSQL is unreachable: \(reason)")
        }
        let client = self.pool.withLockedValue { $0.client }
        let timeout = self.acquireTimeout
        let acquired = NIOLockedValueBox(false)
        do {
            return try await withThrowingTaskGroup(of: R?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        acquired.withLockedValue { $0 = true }
                        return try await body(connection)
                    }
                }
                group.addTask {
                    var wait = AcquisitionWait(timeout: timeout)
                    let clock = ContinuousClock()
                    while true {
                        let start = clock.now
                        try await Task.sleep(for: wait.slice)
                        if acquired.withLockedValue({ $0 }) { return nil }
                        if wait.record(sleptFor: clock.now - start) { throw NoConnection(timeout: timeout) }
                    }
                }
                while let next = try await group.next() {
                    if let result = next {
                        group.cancelAll()
                        return result
                    }
                }
                throw StoreError.unavailable("database operation ended without a result")
            }
        } catch {
            throw self.classified(error)
        }
    }

    /// No pooled connection could be had within the acquire timeout.
    private struct NoConnection: Error {
        let timeout: Duration
    }

    // MARK: Monitoring and recovery

    /// One step of the monitor (it runs until ``shutdown()``): while the breaker is closed, a query through the pool
    /// (an unavailability opens the breaker, in ``withConnection(_:)``), then a pause of ``healthInterval``; while it is
    /// open, a direct probe, and on success a fresh pool and a closed breaker, else a pause of ``probeInterval``.
    ///
    /// The probe is bounded (``probeTimeout``): a failed one is simply tried again. The health check is not: its wait
    /// for a pooled connection is the acquire timeout, which counts only time in which the process could run
    /// (``AcquisitionWait``), and a wall-clock bound on it opened the breaker in CI while the machine was starved.
    private func monitorStep() async {
        if !self.breaker.isOpen {
            _ = try? await self.withConnection { connection in try await connection.query("SELECT 1", logger: self.logger) }
            try? await Task.sleep(for: Self.healthInterval)
        } else if await self.probe() {
            self.replacePool()
            self.breaker.close()
            self.logger.notice("PostgreSQL is reachable again; serving with a fresh connection pool")
        } else {
            try? await Task.sleep(for: Self.probeInterval)
        }
    }

    /// Whether a new connection, outside the pool, can be opened and answers a query within ``probeTimeout``.
    private func probe() async -> Bool {
        await Self.probe(configuration: self.probeConfiguration, timeout: Self.probeTimeout, logger: self.logger)
    }

    /// How long a probe may take before it counts as a failure.
    static let probeTimeout: Duration = .seconds(5)

    /// Whether a new connection can be opened with `configuration` and answers `SELECT 1`, all within `timeout`.
    ///
    /// A probe that does not finish in time counts as a failure, and its attempt is cancelled and left to end on its
    /// own (closing what it opened): the monitor never waits on it. Before, the probe's connection waited as long as
    /// PostgresNIO's own timeouts allowed (about 10 s for a server that takes the connection and never answers), and
    /// its query and close had none. CI once saw an instance answer 503 for the full minute after its database was
    /// back, its monitor never logging a recovery; which wait held it is not known.
    static func probe(configuration: PostgresConnection.Configuration, timeout: Duration, logger: Logger) async -> Bool {
        let answered = await Self.bounded(timeout) { () -> Bool in
            guard let connection = try? await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger) else {
                return false
            }
            let answered = (try? await connection.query("SELECT 1", logger: logger)) != nil
            try? await connection.close()
            return answered
        }
        return answered ?? false
    }

    /// `operation`'s result, or nil when it has not finished within `timeout`: it is then cancelled and left to end on
    /// its own, and the caller goes on without waiting for it.
    static func bounded<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let attempt = Task { await operation() }
        let outcome = NIOLockedValueBox<Bool>(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let finish = { @Sendable (value: T?) in
                let first = outcome.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: value) }
            }
            let timer = Task {
                do { try await Task.sleep(for: timeout) } catch { return }  // cancelled: the operation finished first
                attempt.cancel()
                finish(nil)
            }
            Task {
                finish(await attempt.value)
                timer.cancel()
            }
        }
    }

    /// Replaces the pool with a fresh one; the old one is shut down (its leases, if any, fail and answer 503).
    private func replacePool() {
        let fresh = Pool(self.clientConfiguration, logger: self.logger)
        let old = self.pool.withLockedValue { pool -> Pool in
            defer { pool = fresh }
            return pool
        }
        old.runTask.cancel()
    }

    /// Serialises migrations across instances that start at the same time.
    public var migrationLock: SQLQueryString? {
        // An arbitrary constant key ("tchstone" in ASCII) mixed with the schema's name, held until the migration
        // transaction ends: the instances of one deployment (one schema) migrate one at a time, and deployments or test
        // fixtures in other schemas of the same database do not queue behind each other (under a full test run dozens
        // of schemas migrate at once; one shared key made some wait long enough to meet the pool's outage handling).
        "SELECT pg_advisory_xact_lock(8387236455436332645 # hashtext(current_schema())::bigint)"
    }

    public var hasDataModifyingWith: Bool { true }

    public func isUniqueViolation(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        return error.serverInfo?[.sqlState] == "23505"
    }

    /// Closes the pool. Waits at most `gracePeriod` for it: a database that vanished mid-connection must not keep the
    /// process from exiting.
    public func shutdown() async throws {
        self.monitor.withLockedValue { $0?.cancel() }
        let runTask = self.pool.withLockedValue { $0.runTask }
        runTask.cancel()
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

    /// Turns "cannot talk to the database" into ``StoreError/unavailable(_:)`` and opens the breaker; leaves query
    /// errors and the store's own errors as they are. A connection that died (closed by the server, reset, a broken
    /// pipe) is unavailability, never an internal error.
    private func classified(_ error: any Error) -> any Error {
        let reason: String
        switch error {
        case let error as NoConnection:
            reason = "no database connection within \(error.timeout)"
        case let error as PSQLError where error.code != .server:
            reason = "PostgreSQL: \(error.code)"
        case let error as PSQLError where Self.isUnavailabilityState(error.serverInfo?[.sqlState]):
            reason = "PostgreSQL: \(error.serverInfo?[.message] ?? "unavailable")"
        case let error as PostgresError:
            if case .server(let message) = error, !Self.isUnavailabilityState(message.fields[.sqlState]) { return error }
            reason = "PostgreSQL: \(error)"
        case is ChannelError, is IOError:
            reason = "PostgreSQL connection: \(error)"
        default:
            return error
        }
        if self.breaker.trip(reason) {
            self.logger.warning("PostgreSQL unavailable, answering 503 until it is back: \(reason)")
        }
        return StoreError.unavailable(reason)
    }

    /// SQLSTATE classes that mean the server cannot serve now: 08 connection exception, 53 insufficient resources,
    /// 57P operator intervention (shutdown, crash recovery).
    private static func isUnavailabilityState(_ state: String?) -> Bool {
        guard let state else { return false }
        return state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P")
    }
}

/// The state the executor keeps about the database's reachability: closed (serving) or open (failing fast).
final class CircuitBreaker: Sendable {
    private let state = NIOLockedValueBox<String?>(nil)

    /// Why it is open, or `nil` while closed.
    var openReason: String? { self.state.withLockedValue { $0 } }
    var isOpen: Bool { self.openReason != nil }

    /// Opens the breaker; returns whether this call opened it.
    @discardableResult
    func trip(_ reason: String) -> Bool {
        self.state.withLockedValue { state in
            defer { if state == nil { state = reason } }
            return state == nil
        }
    }

    func close() {
        self.state.withLockedValue { $0 = nil }
    }
}

/// How long a store call has waited for a pooled connection, counting only time in which this process could run.
///
/// The wait sleeps in slices (a twentieth of the timeout, 10 ms to 250 ms). A slice that ends much later than asked
/// means the process's threads were all busy (CPU-bound work holding every thread of the cooperative pool): the
/// connection could have been handed over in that time but nobody could take it, so such a slice counts as two slices,
/// not as its whole length. Without this, a few seconds of starvation made every waiting call time out at once, with
/// the database idle, as soon as the process could run again.
struct AcquisitionWait: Sendable {
    let timeout: Duration
    let slice: Duration
    private(set) var waited: Duration = .zero

    init(timeout: Duration) {
        self.timeout = timeout
        self.slice = min(timeout, max(.milliseconds(10), min(.milliseconds(250), timeout / 20)))
    }

    /// Records one slice that actually lasted `sleptFor`; returns whether the timeout has now passed.
    mutating func record(sleptFor elapsed: Duration) -> Bool {
        self.waited += min(max(elapsed, .zero), self.slice * 2)
        return self.waited >= self.timeout
    }
}
