public import Foundation

/// Admin API keys (stored as hashes).
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol AdminKeyStore: Sendable {
    func insertAdminKey(_ key: AdminKeyRecord) async throws

    /// The unrevoked admin key with this hash.
    func adminKey(keyHash: String) async throws -> AdminKeyRecord?
    func adminKeys() async throws -> [AdminKeyRecord]
    @discardableResult
    func revokeAdminKey(id: String, at: Date) async throws -> Bool
}
