public import Foundation

/// Token-signing keys, sealed under the key-encryption key.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol SigningKeyStore: Sendable {
    /// Every signing key, oldest generation first.
    func signingKeys() async throws -> [SigningKeyRecord]

    /// Adds a key; returns `false` (and adds nothing) when its generation or kid is taken, which is how two instances
    /// that rotate at once end up with one new key.
    func insertSigningKey(_ key: SigningKeyRecord) async throws -> Bool
}
