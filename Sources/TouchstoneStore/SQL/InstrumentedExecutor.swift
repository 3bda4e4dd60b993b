public import CoreMetrics
import Dispatch
public import SQLKit
import Tracing

/// An ``SQLExecutor`` that reports each store operation through swift-metrics: how long it took (queueing for a
/// connection or a group commit included) and how many are in flight, by engine and kind. Labels are bounded: the
/// engine (`sqlite`, `postgres`), the kind (`read`, `write`, `transaction`) and the outcome (`ok`, `error`).
public struct InstrumentedExecutor: SQLExecutor {
    let base: any SQLExecutor
    let engine: String
    private let inFlight: Meter
    /// One timer per kind and outcome, made once: the labels are fixed, so no lookup per operation.
    private let timers: [String: Timer]

    public init(_ base: any SQLExecutor, engine: String, factory: any MetricsFactory) {
        self.base = base
        self.engine = engine
        self.inFlight = Meter(label: "touchstone_db_operations_in_flight", dimensions: [("engine", engine)], factory: factory)
        var timers: [String: Timer] = [:]
        for kind in ["read", "write", "transaction"] {
            for outcome in ["ok", "error"] {
                timers["\(kind)/\(outcome)"] = Timer(
                    label: "touchstone_db_operation_duration_seconds",
                    dimensions: [("engine", engine), ("kind", kind), ("outcome", outcome)],
                    factory: factory
                )
            }
        }
        self.timers = timers
    }

    private func measure<R: Sendable>(_ kind: String, _ body: () async throws -> R) async throws -> R {
        self.inFlight.increment()
        defer { self.inFlight.decrement() }
        let start = DispatchTime.now().uptimeNanoseconds
        var outcome = "ok"
        defer {
            let elapsed = DispatchTime.now().uptimeNanoseconds - start
            self.timers["\(kind)/\(outcome)"]?.recordNanoseconds(Int64(clamping: elapsed))
        }
        do {
            // A child span of the request's (a no-op unless the server was started with tracing).
            return try await withSpan("db.\(kind)", ofKind: .client) { span in
                span.attributes["db.system"] = self.engine
                return try await body()
            }
        } catch {
            outcome = "error"
            throw error
        }
    }

    public func withDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await self.measure("write") { try await self.base.withDatabase(body) }
    }

    public func withReadOnlyDatabase<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await self.measure("read") { try await self.base.withReadOnlyDatabase(body) }
    }

    public func withTransaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await self.measure("transaction") { try await self.base.withTransaction(body) }
    }

    public var migrationLock: SQLQueryString? { self.base.migrationLock }

    public func isUniqueViolation(_ error: any Error) -> Bool { self.base.isUniqueViolation(error) }

    public var hasDataModifyingWith: Bool { self.base.hasDataModifyingWith }

    public func shutdown() async throws { try await self.base.shutdown() }

    public func checkHealth() async throws { try await self.base.checkHealth() }
}
