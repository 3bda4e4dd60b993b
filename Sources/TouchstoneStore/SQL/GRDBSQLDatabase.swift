import Foundation
import GRDB
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// SQLKit's `SQLDatabase` over one GRDB connection, so the store's SQL runs unchanged on SQLite with what SQLiteNIO
/// lacks: each statement is compiled once and kept (GRDB's statement cache), and runs on the caller's thread instead
/// of hopping to a thread pool and back per statement.
///
/// Statements take microseconds (WAL, pages in memory); the one that waits for the disk is `COMMIT` (`fsync` with
/// `synchronous = FULL`), which runs on ``commitThreads`` so that a commit never blocks a thread of Swift's
/// cooperative pool. The connection is used by one caller at a time: the writer by the group-commit leader, a reader
/// by the operation that leased it.
struct GRDBSQLDatabase: SQLDatabase {
    let connection: DatabaseQueue
    /// Where `COMMIT` runs (nil: on the caller's thread, for read connections, which never commit).
    let commitThreads: NIOThreadPool?
    let logger: Logger
    var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
    var version: (any SQLDatabaseReportedVersion)? { nil }
    var dialect: any SQLDialect { TouchstoneSQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLKit.SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        let (sql, binds) = self.serialize(query)
        do {
            try Self.run(sql, binds, on: self.connection, onRow)
            return self.eventLoop.makeSucceededVoidFuture()
        } catch {
            return self.eventLoop.makeFailedFuture(error)
        }
    }

    func execute(sql query: any SQLKit.SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = self.serialize(query)
        if let threads = self.commitThreads, sql == "COMMIT" {
            let connection = self.connection
            try await threads.runIfActive { try Self.run(sql, binds, on: connection, onRow) }
            return
        }
        try Self.run(sql, binds, on: self.connection, onRow)
    }

    private func serialize(_ query: any SQLKit.SQLExpression) -> (String, [any Encodable & Sendable]) {
        var serializer = SQLSerializer(database: self)
        query.serialize(to: &serializer)
        return (serializer.sql, serializer.binds)
    }

    /// Runs one statement from the statement cache; rows are copied out before the next step.
    private static func run(
        _ sql: String,
        _ binds: [any Encodable & Sendable],
        on connection: DatabaseQueue,
        _ onRow: @Sendable (any SQLRow) -> Void
    ) throws {
        let arguments = StatementArguments(try binds.map(Self.databaseValue))
        try connection.inDatabase { db in
            // Transaction control is not cached: SQLite compiles it in no time, and GRDB tracks it itself.
            let statement = sql.hasPrefix("SELECT") || sql.hasPrefix("INSERT") || sql.hasPrefix("UPDATE") || sql.hasPrefix("DELETE")
                ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
            try statement.setArguments(arguments)
            if statement.columnCount == 0 {
                try statement.execute()
                return
            }
            let rows = try Row.fetchCursor(statement)
            var names: [String]?
            while let row = try rows.next() {
                let columns = names ?? Array(row.columnNames)
                names = columns
                onRow(GRDBRow(names: columns, values: Array(row.databaseValues)))
            }
        }
    }

    /// A bound value as SQLite stores it: text, integer, real, blob or NULL.
    static func databaseValue(_ value: Any) throws -> DatabaseValue {
        switch value {
        case let text as String: return text.databaseValue
        case let number as Int64: return number.databaseValue
        case let number as Int: return Int64(number).databaseValue
        case let number as Int32: return Int64(number).databaseValue
        case let number as Double: return number.databaseValue
        case let flag as Bool: return (flag ? 1 : 0 as Int64).databaseValue
        case let bytes as [UInt8]: return Data(bytes).databaseValue
        case let data as Data: return data.databaseValue
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return .null }
                return try Self.databaseValue(wrapped)
            }
            throw StoreError.unavailable("cannot bind a \(type(of: value)) to SQLite")
        }
    }
}

/// A row copied out of a statement: column names and values.
struct GRDBRow: SQLRow {
    let names: [String]
    let values: [DatabaseValue]

    var allColumns: [String] { self.names }

    func contains(column: String) -> Bool { self.names.contains(column) }

    private func value(_ column: String) throws -> DatabaseValue {
        guard let index = self.names.firstIndex(of: column) else {
            throw DecodingError.keyNotFound(
                SQLCodingKey(column),
                .init(codingPath: [], debugDescription: "no column \(column)")
            )
        }
        return self.values[index]
    }

    func decodeNil(column: String) throws -> Bool { try self.value(column).isNull }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        let value = try self.value(column)
        // The common cases without a decoder.
        if D.self == String.self, case .string(let text) = value.storage { return text as! D }
        if D.self == Int64.self, case .int64(let number) = value.storage { return number as! D }
        if D.self == String?.self {
            if case .string(let text) = value.storage { return Optional(text) as! D }
            if value.isNull { return (nil as String?) as! D }
        }
        if D.self == Int64?.self {
            if case .int64(let number) = value.storage { return Optional(number) as! D }
            if value.isNull { return (nil as Int64?) as! D }
        }
        return try D(from: DatabaseValueDecoder(value: value, column: column))
    }
}

private struct SQLCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { self.stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Decodes one SQLite value as a single value (strings, integers, reals, booleans, blobs and their optionals, and
/// enums with a string or integer raw value).
private struct DatabaseValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: DatabaseValue
    let column: String
    var codingPath: [any CodingKey] { [SQLCodingKey(self.column)] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw self.mismatch("a keyed value")
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw self.mismatch("a list") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    private func mismatch(_ expected: String) -> DecodingError {
        .typeMismatch(Any.self, .init(codingPath: self.codingPath, debugDescription: "column \(self.column) holds \(self.value), not \(expected)"))
    }

    func decodeNil() -> Bool { self.value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try self.decode(Int64.self) != 0 }
    func decode(_ type: String.Type) throws -> String {
        guard case .string(let text) = self.value.storage else { throw self.mismatch("text") }
        return text
    }
    func decode(_ type: Double.Type) throws -> Double {
        switch self.value.storage {
        case .double(let number): return number
        case .int64(let number): return Double(number)
        default: throw self.mismatch("a number")
        }
    }
    func decode(_ type: Float.Type) throws -> Float { Float(try self.decode(Double.self)) }
    func decode(_ type: Int64.Type) throws -> Int64 {
        guard case .int64(let number) = self.value.storage else { throw self.mismatch("an integer") }
        return number
    }
    func decode(_ type: Int.Type) throws -> Int { Int(try self.decode(Int64.self)) }
    func decode(_ type: Int8.Type) throws -> Int8 { try self.integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try self.integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try self.integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try self.integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try self.integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try self.integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try self.integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try self.integer() }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == Data.self, case .blob(let data) = self.value.storage { return data as! T }
        return try T(from: self)
    }

    private func integer<T: FixedWidthInteger>() throws -> T {
        guard let value = T(exactly: try self.decode(Int64.self)) else { throw self.mismatch("an integer in range") }
        return value
    }
}

/// SQLite's SQL as the store writes it: numbered `?N` placeholders, double-quoted identifiers, `RETURNING` and upserts.
struct TouchstoneSQLiteDialect: SQLDialect {
    var name: String { "sqlite" }
    var identifierQuote: any SQLKit.SQLExpression { SQLRaw("\"") }
    var literalStringQuote: any SQLKit.SQLExpression { SQLRaw("'") }
    func bindPlaceholder(at position: Int) -> any SQLKit.SQLExpression { SQLRaw("?\(position)") }
    func literalBoolean(_ value: Bool) -> any SQLKit.SQLExpression { SQLRaw(value ? "TRUE" : "FALSE") }
    var literalDefault: any SQLKit.SQLExpression { SQLLiteral.null }
    var supportsAutoIncrement: Bool { false }
    var autoIncrementClause: any SQLKit.SQLExpression { SQLRaw("AUTOINCREMENT") }
    var supportsReturning: Bool { true }
    var upsertSyntax: SQLUpsertSyntax { .standard }
}
