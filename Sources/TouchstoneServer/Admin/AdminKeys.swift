public import Foundation
public import TouchstoneStore

/// Admin keys: created by `touchstone admin create-key`, shown once, stored as SHA-256 hashes.
public enum AdminKeys {
    /// Every admin key begins with this: a recognisable prefix, so a leaked key is easy to spot in logs and code
    /// search, and a bearer token can be told from a session token without a lookup.
    public static let prefix = "tsa_"

    /// The unrevoked key `key` names, looked up by its SHA-256 hash (the key itself is never stored or compared).
    static func find(_ key: String, store: any AdminKeyStore) async throws -> AdminKeyRecord? {
        try await store.adminKey(keyHash: Secrets.hash(token: key))
    }

    /// Creates and stores a key; returns the key (to show once) and its record.
    public static func create(
        name: String,
        store: any AdminKeyStore,
        dependencies: TouchstoneDependencies = .live
    ) async throws -> (key: String, record: AdminKeyRecord) {
        let secrets = Secrets(randomBytes: dependencies.randomBytes)
        let key = Self.prefix + secrets.newToken()
        let record = AdminKeyRecord(
            id: secrets.newIdentifier(),
            name: name,
            keyHash: Secrets.hash(token: key),
            createdAt: dependencies.now()
        )
        try await store.insertAdminKey(record)
        return (key, record)
    }
}
