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
}
