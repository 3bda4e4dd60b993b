import SQLKit

// Caps that hold across instances (issue #44 item 4): a check-then-write on a count per key first locks the key's row.
extension SQLTouchstoneStore {
    /// Takes the row lock of `key` for the rest of the transaction (an upsert that changes nothing but locks): the way
    /// a check-then-write on a count per key holds across instances (docs/architecture.md).
    static func serialise(_ key: String, in db: any SQLDatabase) async throws {
        try await db.raw("INSERT INTO serial_keys (key) VALUES (\(bind: key)) ON CONFLICT (key) DO UPDATE SET key = excluded.key").run()
    }
}
