public import Foundation
import SQLKit

// DPoP proofs' jti: one row each until they expire (purged), the primary key making a second use fail.
extension SQLTouchstoneStore {
    public func recordDPoPProof(thumbprint: String, jti: String, expiresAt: Date) async throws -> Bool {
        // A hot statement: every DPoP request runs it (prepared once per connection on PostgreSQL).
        try await self.executor.withDatabase { db in
            try await db.hot(
                """
                INSERT INTO dpop_proofs (thumbprint, jti, expires_at) VALUES (\(bind: thumbprint), \(bind: jti), \(bind: expiresAt.millis))
                ON CONFLICT (thumbprint, jti) DO NOTHING RETURNING jti
                """
            ).first != nil
        }
    }
}
