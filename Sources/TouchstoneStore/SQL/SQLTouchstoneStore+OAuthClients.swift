public import Foundation
import SQLKit

// OpenID Connect clients: registered once, listed, deleted, their secret hash replaced.
extension SQLTouchstoneStore {
    public func insertClient(_ client: OAuthClientRecord) async throws {
        do {
            try await self.executor.withDatabase { db in
                try await db.raw(
                    """
                    INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, post_logout_redirect_uris,
                        backchannel_logout_uri, first_party, created_at, secret_rotated_at, ciba, dpop_bound)
                    VALUES (\(bind: client.id), \(bind: client.name), \(bind: client.secretHash),
                        \(bind: client.redirectURIs.joined(separator: "\n")), \(bind: client.postLogoutRedirectURIs.joined(separator: "\n")),
                        \(bind: client.backchannelLogoutURI), \(bind: Int64(client.firstParty ? 1 : 0)), \(bind: client.createdAt.millis),
                        \(bind: client.secretRotatedAt?.millis), \(bind: Int64(client.ciba ? 1 : 0)),
                        \(bind: Int64(client.dpopBoundAccessTokens ? 1 : 0)))
                    """
                ).run()
            }
        } catch where self.executor.isUniqueViolation(error) {
            throw StoreError.conflict("client id taken")
        }
    }

    public func client(id: String) async throws -> OAuthClientRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM oauth_clients WHERE id = \(bind: id)").first().map(OAuthClientRecord.init(row:))
        }
    }

    public func clients() async throws -> [OAuthClientRecord] {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM oauth_clients ORDER BY created_at, id").all().map(OAuthClientRecord.init(row:))
        }
    }

    public func deleteClient(id: String) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw("DELETE FROM oauth_clients WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    public func rotateClientSecret(id: String, secretHash: String, at: Date) async throws -> Bool {
        try await self.executor.withDatabase { db in
            try await db.raw(
                """
                UPDATE oauth_clients SET secret_hash = \(bind: secretHash), secret_rotated_at = \(bind: at.millis)
                WHERE id = \(bind: id) AND secret_hash IS NOT NULL
                RETURNING id
                """
            ).first() != nil
        }
    }
}

extension OAuthClientRecord {
    init(row: any SQLRow) throws {
        func list(_ column: String) throws -> [String] {
            let text = try row.decode(column: column, as: String.self)
            return text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            secretHash: try row.decode(column: "secret_hash", as: String?.self),
            redirectURIs: try list("redirect_uris"),
            postLogoutRedirectURIs: try list("post_logout_redirect_uris"),
            backchannelLogoutURI: try row.decode(column: "backchannel_logout_uri", as: String?.self),
            firstParty: try row.decode(column: "first_party", as: Int64.self) != 0,
            createdAt: try row.date("created_at"),
            secretRotatedAt: try row.optionalDate("secret_rotated_at")
        )
        self.ciba = try row.decode(column: "ciba", as: Int64.self) != 0
        self.dpopBoundAccessTokens = try row.decode(column: "dpop_bound", as: Int64.self) != 0
    }
}
