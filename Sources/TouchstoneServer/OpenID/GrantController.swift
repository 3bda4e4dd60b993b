import Foundation
import Hummingbird
import TouchstoneStore

/// The user's consents to third-party clients: `GET /v1/grants` lists them, `DELETE /v1/grants/{clientId}` withdraws
/// one and revokes that client's tokens for the user.
struct GrantController {
    typealias Context = TouchstoneRequestContext

    let store: any TouchstoneStore
    let audit: AuditLog
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let grants = router.group("/v1/grants").add(middleware: authenticator)
        grants.get(use: self.list)
        grants.delete("/:clientId", use: self.delete)
    }

    struct Grant: Encodable {
        var clientId: String
        var clientName: String
        var scopes: [String]
        var grantedAt: String
    }

    struct GrantList: Encodable {
        var grants: [Grant]
    }

    @Sendable func list(request: Request, context: Context) async throws -> JSONResponse<GrantList> {
        let identity = try context.requireIdentity()
        return JSONResponse(.ok, GrantList(grants: try await Self.grants(of: identity.user.id, store: self.store)), headers: [.cacheControl: "no-store"])
    }

    /// The clients the user allowed, with their names (also the data export's consents).
    static func grants(of userId: String, store: any AuthorizationStore & OAuthClientStore) async throws -> [Grant] {
        var grants: [Grant] = []
        for consent in try await store.consents(userId: userId) {
            let name = try await store.client(id: consent.clientId)?.name ?? consent.clientId
            grants.append(Grant(clientId: consent.clientId, clientName: name, scopes: consent.scopes, grantedAt: consent.grantedAt.rfc3339))
        }
        return grants
    }

    @Sendable func delete(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let clientId = try context.parameters.require("clientId")
        guard clientId.utf8.count <= 200 else { throw APIError.grantNotFound }
        let userId = identity.user.id
        let now = self.now()
        let event = self.audit.event(.consentRevoked, userId: userId, reason: "client \(clientId)")
        let found = try await self.store.unitOfWork { tx in
            guard try await tx.deleteConsent(userId: userId, clientId: clientId) else { return false }
            _ = try await tx.revokeTokenFamilies(userId: userId, clientId: clientId, at: now)
            try await tx.insertAuditEvent(event)
            return true
        }
        guard found else { throw APIError.grantNotFound }
        self.audit.committed([event])
        return .noContent
    }
}
