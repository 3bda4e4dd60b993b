public import Foundation

/// Apple App Attest keys and their counters.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol AppAttestKeyStore: Sendable {
    /// Stores an attested key. Throws ``StoreError/conflict(_:)`` when the key id is already registered.
    func insertAppAttestKey(_ key: AppAttestKeyRecord) async throws
    func appAttestKey(keyId: String) async throws -> AppAttestKeyRecord?

    /// Moves a key's counter from `previous` to the larger `counter`, atomically; `false` when the stored counter is no
    /// longer `previous` (another assertion got there first: the caller's is a replay or a race).
    func advanceAppAttestCounter(keyId: String, from previous: Int64, to counter: Int64, at: Date) async throws -> Bool
}
