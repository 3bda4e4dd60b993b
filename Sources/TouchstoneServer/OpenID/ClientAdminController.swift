import Foundation
import Hummingbird
import TouchstoneStore

/// The OpenID provider's clients through the admin API (issue #31, §1): `/v1/admin/clients`, with an admin key.
struct ClientAdminController {
    typealias Context = TouchstoneRequestContext

    let store: any TouchstoneStore
    let dependencies: TouchstoneDependencies
    /// The server's audit log: its metrics count the clients' events.
    let audit: AuditLog

    func addRoutes(to router: Router<Context>) {
        let clients = router.group("/v1/admin/clients").add(middleware: AdminAuthenticator(store: self.store))
        clients.post(use: self.create)
        clients.get(use: self.list)
        clients.delete("/:id", use: self.delete)
        clients.post("/:id/rotate-secret", use: self.rotateSecret)
    }

    /// `POST /v1/admin/clients` `{"name", "redirectUris", "postLogoutRedirectUris"?, "backchannelLogoutUri"?,
    /// "public"?, "firstParty"?, "ciba"?, "dpopBoundAccessTokens"?}`.
    struct CreateInput: Decodable {
        var registration: OAuthClients.Registration

        enum CodingKeys: String, CodingKey { case name, redirectUris, postLogoutRedirectUris, backchannelLogoutUri, `public`, firstParty, ciba, dpopBoundAccessTokens }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // The name and URIs are checked whole by OAuthClients.validate; here only their type and size.
            let name = try container.decodeString(.name, maxLength: 800, allowEmpty: true)
            let redirectURIs = try Self.uris(container, .redirectUris) ?? []
            self.registration = OAuthClients.Registration(name: name, redirectURIs: redirectURIs)
            self.registration.postLogoutRedirectURIs = try Self.uris(container, .postLogoutRedirectUris) ?? []
            self.registration.backchannelLogoutURI = try container.decodeStringIfPresent(.backchannelLogoutUri, maxLength: 2000)
            self.registration.isPublic = try container.decodeIfPresent(Bool.self, forKey: .public) ?? false
            self.registration.firstParty = try container.decodeIfPresent(Bool.self, forKey: .firstParty) ?? false
            self.registration.ciba = try container.decodeIfPresent(Bool.self, forKey: .ciba) ?? false
            self.registration.dpopBoundAccessTokens = try container.decodeIfPresent(Bool.self, forKey: .dpopBoundAccessTokens) ?? false
        }

        private static func uris(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> [String]? {
            guard let uris = try container.decodeIfPresent([String].self, forKey: key) else { return nil }
            guard uris.count <= 20 else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [key], debugDescription: "", underlyingError: FieldError(message: "field '\(key.stringValue)' has more than 20 URIs"))
                )
            }
            return uris
        }
    }

    @Sendable func create(request: Request, context: Context) async throws -> JSONResponse<OAuthClientResource> {
        let input = try await request.decodeJSON(as: CreateInput.self, context: context)
        do {
            let created = try await OAuthClients.create(
                input.registration, store: self.store, dependencies: self.dependencies, audit: self.audit, actor: self.actor(context))
            return JSONResponse(.created, OAuthClientResource(created.record, secret: created.secret), headers: [.cacheControl: "no-store"])
        } catch let error as OAuthClients.InvalidRegistration {
            throw APIError.invalidRequest(error.description)
        }
    }

    struct ClientList: Encodable { var clients: [OAuthClientResource] }

    @Sendable func list(request: Request, context: Context) async throws -> JSONResponse<ClientList> {
        JSONResponse(.ok, ClientList(clients: try await self.store.clients().map { OAuthClientResource($0) }))
    }

    @Sendable func delete(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        guard try await OAuthClients.delete(id: id, store: self.store, audit: self.audit, actor: self.actor(context)) else {
            throw APIError.clientNotFound
        }
        return .noContent
    }

    struct NewSecret: Encodable {
        var clientId: String
        var clientSecret: String
    }

    @Sendable func rotateSecret(request: Request, context: Context) async throws -> JSONResponse<NewSecret> {
        let id = try context.parameters.require("id")
        guard let client = try await self.store.client(id: id) else { throw APIError.clientNotFound }
        guard !client.isPublic else { throw APIError.publicClientHasNoSecret }
        guard let secret = try await OAuthClients.rotateSecret(
            id: id, store: self.store, dependencies: self.dependencies, audit: self.audit, actor: self.actor(context))
        else {
            throw APIError.clientNotFound  // deleted meanwhile
        }
        return JSONResponse(.ok, NewSecret(clientId: id, clientSecret: secret), headers: [.cacheControl: "no-store"])
    }

    private func actor(_ context: Context) -> String { "admin:\(context.adminKey?.name ?? "?")" }
}
