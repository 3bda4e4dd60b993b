import Foundation
import Hummingbird
import TouchstoneStore

/// The account as its owner's (issue #42): `DELETE /v1/users/me` deletes it (GDPR article 17), `GET
/// /v1/users/me/export` gives everything Touchstone holds about the user (articles 15 and 20).
struct OwnAccountController {
    typealias Context = TouchstoneRequestContext

    let store: any TouchstoneStore
    let sessions: SessionManager
    let secrets: Secrets
    let audit: AuditLog
    let now: @Sendable () -> Date
    let reauthenticationWindow: TimeInterval

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let me = router.group("/v1/users/me").add(middleware: authenticator)
        me.delete(use: self.delete)
        me.get("export", use: self.export)
    }

    /// The export, as a download: fresh strong authentication.
    @Sendable func export(request: Request, context: Context) async throws -> JSONResponse<AccountExport> {
        let identity = try context.requireIdentity()
        try self.sessions.requireFreshStrongAuthentication(identity, within: self.reauthenticationWindow)
        let document = try await AccountExport.make(for: identity, store: self.store, secrets: self.secrets, now: self.now())
        return JSONResponse(.ok, document, headers: [
            .contentDisposition: #"attachment; filename="touchstone-export.json""#,
            .cacheControl: "no-store",
        ])
    }

    struct DeleteInput: Decodable {
        var confirmEmail: String

        enum CodingKeys: CodingKey { case confirmEmail }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.confirmEmail = try container.decodeEmail(.confirmEmail)
        }
    }

    /// Deletes the caller's account: fresh strong authentication, and the
    /// address typed again. Everything of the account goes in one transaction with its `user.deleted` event (webhook)
    /// and the goodbye mail; its sessions end first, so OpenID clients get back-channel logout tokens.
    @Sendable func delete(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        try self.sessions.requireFreshStrongAuthentication(identity, within: self.reauthenticationWindow)
        let input = try await request.decodeJSON(as: DeleteInput.self, context: context)
        // Both sides are normalised (NFC, lower case) as sign-up stores addresses.
        guard input.confirmEmail == identity.user.email else { throw APIError.emailMismatch }
        let event = self.audit.event(.userDeleted, userId: identity.user.id, reason: "self", notify: identity.user.email)
        let now = self.now()
        guard try await self.audit.commit(event, when: { tx in try await tx.deleteUser(id: identity.user.id, at: now) }) else {
            // Deleted by another request meanwhile: the session is gone with it.
            throw APIError.unauthenticated("the account no longer exists")
        }
        return .noContent
    }
}
