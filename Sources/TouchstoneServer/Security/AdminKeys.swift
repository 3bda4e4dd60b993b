public import Foundation
public import TouchstoneStore

/// Admin keys: created by `touchstone admin create-key`, shown once, stored as SHA-256 hashes.
public enum AdminKeys {
    /// Creates and stores a key; returns the key (to show once) and its record.
    public static func create(
        name: String,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live
    ) async throws -> (key: String, record: AdminKeyRecord) {
        let secrets = Secrets(randomBytes: dependencies.randomBytes)
        // A recognisable prefix, so a leaked key is easy to spot in logs and code search.
        let key = "tsa_" + secrets.newToken()
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
