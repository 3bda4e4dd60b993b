public import Foundation
import SQLKit
import TouchstoneCrypto

// The token-signing key set and the session ids that access tokens carry.
extension SQLTouchstoneStore {
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM signing_keys ORDER BY generation").all().map(SigningKeyRecord.init(row:))
        }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws -> Bool {
        do {
            try await self.executor.withDatabase { db in
                try await db.raw(
                    """
                    INSERT INTO signing_keys (kid, generation, algorithm, public_jwk, sealed_private_key, created_at, activates_at)
                    VALUES (\(bind: key.kid), \(bind: key.generation), \(bind: key.algorithm), \(bind: key.publicJWK),
                        \(bind: Base64.urlEncode(key.sealedPrivateKey)), \(bind: key.createdAt.millis), \(bind: key.activatesAt.millis))
                    """
                ).run()
            }
            return true
        } catch where self.executor.isUniqueViolation(error) {
            return false
        }
    }

    public func session(id: String) async throws -> SessionRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM sessions WHERE id = \(bind: id)").first().map(SessionRecord.init(row:))
        }
    }

    public func assignSessionId(tokenHash: String, id: String) async throws -> String? {
        try await self.executor.withDatabase { db in
            try await db.raw("UPDATE sessions SET id = \(bind: id) WHERE token_hash = \(bind: tokenHash) AND id IS NULL").run()
            return try await db.raw("SELECT id FROM sessions WHERE token_hash = \(bind: tokenHash)").first()
                .flatMap { try $0.decode(column: "id", as: String?.self) }
        }
    }
}

extension SigningKeyRecord {
    init(row: any SQLRow) throws {
        guard let sealed = [UInt8](base64URL: try row.decode(column: "sealed_private_key", as: String.self)) else {
            throw StoreError.unavailable("a stored signing key is not base64url")
        }
        self.init(
            kid: try row.decode(column: "kid", as: String.self),
            generation: try row.decode(column: "generation", as: Int64.self),
            algorithm: try row.decode(column: "algorithm", as: String.self),
            publicJWK: try row.decode(column: "public_jwk", as: String.self),
            sealedPrivateKey: sealed,
            createdAt: try row.date("created_at"),
            activatesAt: try row.date("activates_at")
        )
    }
}
