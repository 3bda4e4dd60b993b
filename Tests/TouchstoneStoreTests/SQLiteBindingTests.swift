import Foundation
import Logging
import SQLKit
import Testing
import TouchstoneStore

/// The SQLite adapter's binding and decoding (GRDBSQLDatabase): values round-trip with their types, and a value it
/// cannot bind or a column of another type is an error, never a wrong value.
struct SQLiteBindingTests {
    private struct Unbindable: Encodable, Sendable { var x = 1 }

    @Test func valuesRoundTripAndMismatchesAreErrors() async throws {
        let executor = try await SQLiteExecutor.open(.memory, logger: Logger(label: "test"))
        let text: String? = nil
        let number: Int64? = 7
        let row = try await executor.withDatabase { db in
            try await db.raw(
                "SELECT \(bind: "a\u{e9}") AS t, \(bind: Int64(42)) AS i, \(bind: 1.5) AS d, \(bind: true) AS b, \(bind: text) AS n, \(bind: number) AS o"
            ).first()
        }
        let values = try #require(row)
        #expect(values.allColumns == ["t", "i", "d", "b", "n", "o"])
        #expect(try values.decode(column: "t", as: String.self) == "a\u{e9}")
        #expect(try values.decode(column: "i", as: Int64.self) == 42)
        #expect(try values.decode(column: "i", as: Int.self) == 42)
        #expect(try values.decode(column: "d", as: Double.self) == 1.5)
        #expect(try values.decode(column: "b", as: Bool.self))
        #expect(try values.decode(column: "n", as: String?.self) == nil)
        #expect(try values.decodeNil(column: "n"))
        #expect(try values.decode(column: "o", as: Int64?.self) == 7)
        // A column of another type, or one that is not there.
        #expect(throws: DecodingError.self) { try values.decode(column: "t", as: Int64.self) }
        #expect(throws: DecodingError.self) { try values.decode(column: "i", as: String.self) }
        #expect(throws: DecodingError.self) { try values.decode(column: "missing", as: String.self) }
        // A value SQLite has no type for.
        await #expect(throws: (any Error).self) {
            try await executor.withDatabase { db in try await db.raw("SELECT \(bind: Unbindable()) AS u").run() }
        }
        try await executor.shutdown()
    }

    /// Text is bound by its length: a NUL is a character, stored and compared like any other, so `id\u{0}anything`
    /// never finds the row `id` (bound up to a terminator, it did: issue #29, item 1).
    @Test func textWithANulIsStoredWholeAndNeverMatchesItsPrefix() async throws {
        let executor = try await SQLiteExecutor.open(.memory, logger: Logger(label: "test"))
        let withNul = "reg-1\u{0}anything"
        let rows = try await executor.withDatabase { db in
            try await db.raw("CREATE TABLE t (id TEXT PRIMARY KEY, b BLOB)").run()
            try await db.raw("INSERT INTO t (id, b) VALUES (\(bind: "reg-1"), \(bind: [UInt8]()))").run()
            try await db.raw("INSERT INTO t (id, b) VALUES (\(bind: withNul), \(bind: [UInt8]([0, 1, 0])))").run()
            return try await db.raw("SELECT id, length(CAST(id AS BLOB)) AS n, hex(b) AS b FROM t WHERE id = \(bind: withNul)").all()
        }
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(try row.decode(column: "id", as: String.self) == withNul)
        #expect(try row.decode(column: "n", as: Int64.self) == Int64(withNul.utf8.count))
        #expect(try row.decode(column: "b", as: String.self) == "000100")
        // The prefix alone finds only its own row; the empty text and the empty blob are values, not NULL.
        let (prefixRows, empty) = try await executor.withDatabase { db in
            let prefix = try await db.raw("SELECT id FROM t WHERE id = \(bind: "reg-1")").all()
            let empty = try await db.raw(
                "SELECT \(bind: "") IS NULL AS textIsNull, b IS NULL AS blobIsNull, length(b) AS n FROM t WHERE id = \(bind: "reg-1")"
            ).first()
            return (prefix, empty)
        }
        #expect(prefixRows.count == 1)
        let flags = try #require(empty)
        #expect(try flags.decode(column: "textIsNull", as: Int64.self) == 0)
        #expect(try flags.decode(column: "blobIsNull", as: Int64.self) == 0)
        #expect(try flags.decode(column: "n", as: Int64.self) == 0)
        try await executor.shutdown()
    }
}
