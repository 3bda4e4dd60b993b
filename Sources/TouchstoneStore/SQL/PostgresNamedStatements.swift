import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit
import PostgresNIO
import SQLKit

/// A statement of a sign-in's hot path. Every engine runs it as usual; on PostgreSQL it is a named prepared statement,
/// parsed and planned once per connection instead of at every execution (parsing and planning were about 40 % of the
/// database server's CPU in a sign-in; docs/performance.md). A hot statement names its result columns (never `*`):
/// PostgreSQL plans a prepared statement again after a migration adds a column, but refuses one whose result shape
/// would change.
struct HotStatement: SQLExpression {
    let query: SQLQueryString

    func serialize(to serializer: inout SQLSerializer) {
        self.query.serialize(to: &serializer)
    }
}

extension SQLDatabase {
    /// Runs `query` as a ``HotStatement`` and returns its rows.
    func hot(_ query: SQLQueryString) async throws -> [any SQLRow] {
        let rows = NIOLockedValueBox<[any SQLRow]>([])
        try await self.execute(sql: HotStatement(query: query)) { row in rows.withLockedValue { $0.append(row) } }
        return rows.withLockedValue { $0 }
    }
}

/// The connection's `SQLDatabase` (postgres-kit's) with one difference: a ``HotStatement`` runs as a named prepared
/// statement.
struct PostgresPreparingDatabase: SQLDatabase {
    let connection: PostgresConnection
    let base: any SQLDatabase
    var logger: Logger { self.base.logger }
    var eventLoop: any EventLoop { self.base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { self.base.version }
    var dialect: any SQLDialect { self.base.dialect }
    var queryLogLevel: Logger.Level? { self.base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        self.base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        guard let hot = query as? HotStatement else { return try await self.base.execute(sql: query, onRow) }
        var serializer = SQLSerializer(database: self)
        hot.serialize(to: &serializer)
        guard let (bindings, types) = NamedStatement.bindings(serializer.binds) else {
            // A value of a type the named path does not encode: the usual way.
            return try await self.base.execute(sql: query, onRow)
        }
        try await self.run(serializer.sql, bindings, types, onRow)
    }

    private func run(
        _ sql: String,
        _ bindings: PostgresBindings,
        _ types: [PostgresDataType],
        _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) async throws {
        let text = NamedStatement.Text(name: NamedStatement.names.name(for: sql), sql: sql, types: types)
        try await NamedStatement.$current.withValue(text) {
            let rows = try await self.connection.execute(NamedStatement(bindings: bindings), logger: self.connection.logger)
            for try await row in rows { onRow(row.sql()) }
        }
    }
}

/// postgres-nio's prepared statements name their SQL statically, per type; Touchstone's statements are built at run
/// time (SQLKit). The name, SQL and parameter types are therefore read from a task-local value that
/// ``PostgresPreparingDatabase`` sets around each execution: postgres-nio reads them synchronously in
/// `PostgresConnection.execute(_:logger:)`, and keeps which names a connection has prepared.
struct NamedStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        let name: String
        let sql: String
        let types: [PostgresDataType]
    }

    typealias Row = PostgresRow

    @TaskLocal static var current: Text?

    static var name: String { Self.text.name }
    static var sql: String { Self.text.sql }
    static var bindingDataTypes: [PostgresDataType] { Self.text.types }

    private static var text: Text {
        guard let current = Self.current else { preconditionFailure("a named statement runs inside NamedStatement.$current.withValue") }
        return current
    }

    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { self.bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }

    static let names = Names()

    /// Statement names by SQL text, for the life of the process (the hot statements are a few fixed texts).
    final class Names: Sendable {
        private struct State {
            var names: [String: String] = [:]
            var issued = 0
        }

        private let state = NIOLockedValueBox(State())

        func name(for sql: String) -> String {
            self.state.withLockedValue { state in
                if let name = state.names[sql] { return name }
                state.issued += 1
                let name = "touchstone_\(state.issued)"
                state.names[sql] = name
                return name
            }
        }
    }

    /// The values encoded for postgres-nio, with each parameter's type taken from the value's static type (so that a
    /// NULL has the same type as a value would, and the statement prepared first fits every later execution); `nil`
    /// when a value is of a type not handled here.
    static func bindings(_ values: [any Encodable & Sendable]) -> (PostgresBindings, [PostgresDataType])? {
        var bindings = PostgresBindings(capacity: values.count)
        var types: [PostgresDataType] = []
        types.reserveCapacity(values.count)
        for value in values {
            switch value {
            case let value as String:
                bindings.append(value, context: .default)
                types.append(.text)
            case let value as Int64:
                bindings.append(value, context: .default)
                types.append(.int8)
            case let value as Int:
                bindings.append(Int64(value), context: .default)
                types.append(.int8)
            default:
                // A NULL: its type from the optional's static type (a nil casts to any optional type, so compare types).
                let type = Swift.type(of: value)
                if type == String?.self {
                    guard (value as? String?) == .some(nil) else { return nil }
                    bindings.appendNull()
                    types.append(.text)
                } else if type == Int64?.self {
                    guard (value as? Int64?) == .some(nil) else { return nil }
                    bindings.appendNull()
                    types.append(.int8)
                } else {
                    return nil
                }
            }
        }
        return (bindings, types)
    }

}
