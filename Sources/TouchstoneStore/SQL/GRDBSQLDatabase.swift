import Foundation
import GRDB
import GRDBSQLite
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// SQLKit's `SQLDatabase` over one GRDB connection, so the store's SQL runs unchanged on SQLite with what SQLiteNIO
/// lacks: each statement is compiled once and kept (GRDB's statement cache), and runs on the caller's thread instead
/// of hopping to a thread pool and back per statement.
///
/// Statements take microseconds (WAL, pages in memory); the ones that can wait are `COMMIT` (`fsync` with
/// `synchronous = FULL`) and `BEGIN IMMEDIATE` (another process holding the write lock, up to the busy timeout), which
/// run on ``commitThreads`` so that they never block a thread of Swift's cooperative pool. The connection is used by one caller at a time: the writer by the group-commit leader, a reader
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
        // The statements that may wait: COMMIT for the disk, BEGIN IMMEDIATE for another process's write lock (up to
        // the busy timeout). They run on the commit thread, never blocking a thread of the cooperative pool.
        if let threads = self.commitThreads, sql == "COMMIT" || sql.hasPrefix("BEGIN") {
            let connection = self.connection
            try await threads.runIfActive { try Self.run(sql, binds, on: connection, onRow) }
            return
        }
        try Self.run(sql, binds, on: self.connection, onRow)
    }

    private func serialize(_ query: any SQLKit.SQLExpression) -> (String, [any Encodable & Sendable]) {
        var serializer = SQLSerializer(database: self)
        // Room for a hot statement's text (the joins' are about 1 KiB) and binds: no regrowth while it is written.
        serializer.sql.reserveCapacity(1024)
        serializer.binds.reserveCapacity(16)
        query.serialize(to: &serializer)
        return (serializer.sql, serializer.binds)
    }

    /// Runs one statement from the statement cache, binding and stepping it with SQLite's own calls (no per-call
    /// argument or row objects); rows are copied out before the next step.
    private static func run(
        _ sql: String,
        _ binds: [any Encodable & Sendable],
        on connection: DatabaseQueue,
        _ onRow: @Sendable (any SQLRow) -> Void
    ) throws {
        try connection.inDatabase { db in
            // Every statement from the cache, transaction control included (each group-commit job's SAVEPOINT and
            // RELEASE were compiled anew, with a statement object each: measured in docs/performance.md, item 13).
            let statement = try db.cachedStatement(sql: sql)
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            defer { sqlite3_reset(handle) }
            for (index, value) in binds.enumerated() {
                let code = Self.bind(value, at: Int32(index + 1), to: handle)
                guard code == SQLITE_OK else { throw Self.error(code, db: db, sql: sql) }
            }
            let columns = Int32(statement.columnCount)
            var names: [String] = []
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE { return }
                guard code == SQLITE_ROW else { throw Self.error(code, db: db, sql: sql) }
                // The statement keeps its column names once read: a cached statement's rows share one array.
                if names.isEmpty && columns > 0 { names = statement.columnNames }
                var values: [DatabaseValue] = []
                values.reserveCapacity(Int(columns))
                for column in 0..<columns { values.append(Self.value(handle, column)) }
                onRow(GRDBRow(names: names, values: values))
            }
        }
    }

    private static func error(_ code: Int32, db: Database, sql: String) -> DatabaseError {
        let connection = db.sqliteConnection
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: extended), message: message, sql: sql)
    }

    /// SQLite copies bound text and blobs (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds a value as SQLite stores it: text, integer, real, blob or NULL.
    private static func bind(_ value: Any, at index: Int32, to handle: OpaquePointer) -> Int32 {
        switch value {
        case let text as String:
            return Self.bind(text: text, at: index, to: handle)
        case let number as Int64:
            return sqlite3_bind_int64(handle, index, number)
        case let number as Int:
            return sqlite3_bind_int64(handle, index, Int64(number))
        case let number as Double:
            return sqlite3_bind_double(handle, index, number)
        case let flag as Bool:
            return sqlite3_bind_int64(handle, index, flag ? 1 : 0)
        case let bytes as [UInt8]:
            return bytes.withUnsafeBytes { Self.bind(blob: $0, at: index, to: handle) }
        case let number as Int32:
            return sqlite3_bind_int64(handle, index, Int64(number))
        case let data as Data:
            return data.withUnsafeBytes { Self.bind(blob: $0, at: index, to: handle) }
        case let text as String?:
            guard let text else { return sqlite3_bind_null(handle, index) }
            return Self.bind(text: text, at: index, to: handle)
        case let number as Int64?:
            guard let number else { return sqlite3_bind_null(handle, index) }
            return sqlite3_bind_int64(handle, index, number)
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return sqlite3_bind_null(handle, index) }
                return Self.bind(wrapped, at: index, to: handle)
            }
            return SQLITE_MISMATCH
        }
    }

    /// Binds text by its UTF-8 byte length, never up to a terminator: a NUL inside the text is a character SQLite
    /// stores and compares, so what is stored is exactly what was validated, hashed or signed (with a length of -1,
    /// SQLite would read only up to the first NUL: `id\u{0}anything` would find the row `id`).
    private static func bind(text: String, at index: Int32, to handle: OpaquePointer) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            // An empty buffer may have no address, which SQLite would bind as NULL: bind the empty text as such.
            guard let base = utf8.baseAddress, utf8.count > 0 else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
            guard let count = Int32(exactly: utf8.count) else { return SQLITE_TOOBIG }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(handle, index, $0, count, Self.transient)
            }
        }
    }

    /// Binds bytes by their length; an empty blob is bound as a zero-length blob, not NULL.
    private static func bind(blob: UnsafeRawBufferPointer, at index: Int32, to handle: OpaquePointer) -> Int32 {
        guard let count = Int32(exactly: blob.count) else { return SQLITE_TOOBIG }
        guard let base = blob.baseAddress, count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return sqlite3_bind_blob(handle, index, base, count, Self.transient)
    }

    private static func value(_ handle: OpaquePointer, _ column: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER:
            return sqlite3_column_int64(handle, column).databaseValue
        case SQLITE_FLOAT:
            return sqlite3_column_double(handle, column).databaseValue
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, column) else { return "".databaseValue }
            let count = Int(sqlite3_column_bytes(handle, column))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self).databaseValue
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let bytes = sqlite3_column_blob(handle, column), count > 0 else { return Data().databaseValue }
            return Data(bytes: bytes, count: count).databaseValue
        default:
            return .null
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
