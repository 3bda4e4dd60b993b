public import Foundation
import SQLKit
import TouchstoneCrypto

// App Attest keys and their counters.
extension SQLTouchstoneStore {
    public func insertAppAttestKey(_ key: AppAttestKeyRecord) async throws {
        do {
            try await self.executor.withDatabase { db in
                try await db.raw(
                    """
                    INSERT INTO app_attest_keys (key_id, public_key, app_id, environment, counter, receipt, created_at,
                        last_used_at)
                    VALUES (\(bind: key.keyId), \(bind: key.publicKey.base64URL), \(bind: key.appId), \(bind: key.environment),
                        \(bind: key.counter), \(bind: key.receipt.base64URL), \(bind: key.createdAt.millis),
                        \(bind: key.lastUsedAt?.millis))
                    """
                ).run()
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("App Attest key \(key.keyId) is already registered")
        }
    }

    public func appAttestKey(keyId: String) async throws -> AppAttestKeyRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM app_attest_keys WHERE key_id = \(bind: keyId)").first().map(AppAttestKeyRecord.init(row:))
        }
    }

    public func advanceAppAttestCounter(keyId: String, from previous: Int64, to counter: Int64, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE app_attest_keys SET counter = \(bind: counter), last_used_at = \(bind: at.millis)
                WHERE key_id = \(bind: keyId) AND counter = \(bind: previous) AND counter < \(bind: counter)
                RETURNING key_id
                """
            ).first() != nil
        }
    }
}
