public import Foundation

/// The OpenID provider's registered clients.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol OAuthClientStore: Sendable {
    /// Registers a client. Throws ``StoreError/conflict(_:)`` when its id is taken.
    func insertClient(_ client: OAuthClientRecord) async throws
    func client(id: String) async throws -> OAuthClientRecord?
    /// Every client, oldest first.
    func clients() async throws -> [OAuthClientRecord]
    /// Deletes a client; returns whether it existed.
    func deleteClient(id: String) async throws -> Bool
    /// Replaces a confidential client's secret hash (the old secret stops working at once); returns whether a
    /// confidential client with this id exists.
    func rotateClientSecret(id: String, secretHash: String, at: Date) async throws -> Bool
}
