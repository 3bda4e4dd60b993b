import Crypto
import Foundation
import Hummingbird
import TouchstoneStore
import TouchstoneWebhooks

/// Webhook endpoints through the admin API (issue #32): `/v1/admin/webhooks`, with an admin key.
struct WebhookAdminController {
    typealias Context = TouchstoneRequestContext

    let store: any TouchstoneStore
    let dependencies: TouchstoneDependencies
    let audit: AuditLog
    let policy: DestinationPolicy
    let keyEncryptionKey: SymmetricKey

    func addRoutes(to router: Router<Context>) {
        let webhooks = router.group("/v1/admin/webhooks").add(middleware: AdminAuthenticator(store: self.store))
        webhooks.post(use: self.create)
        webhooks.get(use: self.list)
        webhooks.get("/event-types", use: self.eventTypes)
        webhooks.get("/:id", use: self.read)
        webhooks.patch("/:id", use: self.update)
        webhooks.delete("/:id", use: self.delete)
        webhooks.post("/:id/rotate-secret", use: self.rotateSecret)
        webhooks.post("/:id/test", use: self.test)
        webhooks.get("/:id/deliveries", use: self.deliveries)
        webhooks.post("/:id/deliveries/:eventId/retry", use: self.retry)
    }

    /// The body of `POST` and `PATCH`: `{"url", "events", "description", "enabled"}` (`enabled` on `PATCH` only).
    struct Input: Decodable {
        var change: WebhookEndpoints.Change

        enum CodingKeys: String, CodingKey { case url, events, description, enabled }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // The values are checked whole by WebhookEndpoints; here only their type and size.
            self.change = WebhookEndpoints.Change()
            self.change.url = try container.decodeStringIfPresent(.url, maxLength: DestinationPolicy.maximumURLLength)
            if let events = try container.decodeIfPresent([String].self, forKey: .events) {
                guard events.count <= 32, events.allSatisfy({ $0.utf8.count <= 100 }) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: [CodingKeys.events], debugDescription: "", underlyingError: FieldError(message: "field 'events' has more than 32 entries or an entry over 100 characters"))
                    )
                }
                self.change.events = events
            }
            if container.contains(.description) {
                self.change.description = try container.decodeString(.description, maxLength: 4 * WebhookEndpoints.maximumDescriptionLength, allowEmpty: true, allowLineBreaks: true)
            }
            self.change.enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled)
        }
    }

    @Sendable func create(request: Request, context: Context) async throws -> JSONResponse<WebhookEndpointResource> {
        let input = try await request.decodeJSON(as: Input.self, context: context)
        guard let url = input.change.url else { throw APIError.invalidRequest("field 'url' is required") }
        do {
            let created = try await WebhookEndpoints.create(
                url: url, events: input.change.events ?? [], description: input.change.description ?? "", policy: self.policy,
                keyEncryptionKey: self.keyEncryptionKey, store: self.store, dependencies: self.dependencies, audit: self.audit,
                actor: self.actor(context))
            return JSONResponse(.created, WebhookEndpointResource(created.record, secret: created.secret), headers: [.cacheControl: "no-store"])
        } catch let error as WebhookError {
            throw APIError.invalidWebhook(error)
        }
    }

    struct EndpointList: Encodable { var endpoints: [WebhookEndpointResource] }

    @Sendable func list(request: Request, context: Context) async throws -> JSONResponse<EndpointList> {
        JSONResponse(.ok, EndpointList(endpoints: try await self.store.webhookEndpoints().map { WebhookEndpointResource($0) }))
    }

    struct EventTypeList: Encodable { var eventTypes: [WebhookEventTypeResource] }

    @Sendable func eventTypes(request: Request, context: Context) async throws -> JSONResponse<EventTypeList> {
        JSONResponse(.ok, EventTypeList(eventTypes: (WebhookEventType.all + [WebhookEventType.test]).map(WebhookEventTypeResource.init)))
    }

    @Sendable func read(request: Request, context: Context) async throws -> JSONResponse<WebhookEndpointResource> {
        let id = try context.parameters.require("id")
        guard let record = try await self.store.webhookEndpoint(id: id) else { throw APIError.webhookNotFound }
        return JSONResponse(.ok, WebhookEndpointResource(record))
    }

    @Sendable func update(request: Request, context: Context) async throws -> JSONResponse<WebhookEndpointResource> {
        let id = try context.parameters.require("id")
        let input = try await request.decodeJSON(as: Input.self, context: context)
        do {
            guard let record = try await WebhookEndpoints.update(
                id: id, input.change, policy: self.policy, store: self.store, dependencies: self.dependencies, audit: self.audit,
                actor: self.actor(context))
            else {
                throw APIError.webhookNotFound
            }
            return JSONResponse(.ok, WebhookEndpointResource(record))
        } catch let error as WebhookError {
            throw APIError.invalidWebhook(error)
        }
    }

    @Sendable func delete(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        guard try await WebhookEndpoints.delete(id: id, store: self.store, audit: self.audit, actor: self.actor(context)) else {
            throw APIError.webhookNotFound
        }
        return .noContent
    }

    struct NewSecret: Encodable { var secret: String }

    @Sendable func rotateSecret(request: Request, context: Context) async throws -> JSONResponse<NewSecret> {
        let id = try context.parameters.require("id")
        guard let secret = try await WebhookEndpoints.rotateSecret(
            id: id, keyEncryptionKey: self.keyEncryptionKey, store: self.store, dependencies: self.dependencies, audit: self.audit,
            actor: self.actor(context))
        else {
            throw APIError.webhookNotFound
        }
        return JSONResponse(.ok, NewSecret(secret: secret.description), headers: [.cacheControl: "no-store"])
    }

    struct Queued: Encodable { var eventId: String }

    @Sendable func test(request: Request, context: Context) async throws -> JSONResponse<Queued> {
        let id = try context.parameters.require("id")
        guard let eventId = try await WebhookEndpoints.sendTest(id: id, store: self.store, dependencies: self.dependencies) else {
            throw try await self.store.webhookEndpoint(id: id) == nil ? APIError.webhookNotFound : APIError.webhookDisabled
        }
        return JSONResponse(.accepted, Queued(eventId: eventId))
    }

    struct DeliveryList: Encodable { var deliveries: [WebhookDeliveryResource] }

    /// `?limit=` 1–100, default 20: the newest events first.
    @Sendable func deliveries(request: Request, context: Context) async throws -> JSONResponse<DeliveryList> {
        let id = try context.parameters.require("id")
        var limit = 20
        if let text = request.uri.queryParameters.get("limit") {
            guard text.utf8.count <= 3, let value = Int(text), (1...100).contains(value) else {
                throw APIError.invalidRequest("limit must be a whole number from 1 to 100")
            }
            limit = value
        }
        guard try await self.store.webhookEndpoint(id: id) != nil else { throw APIError.webhookNotFound }
        let deliveries = try await self.store.webhookDeliveries(endpointId: id, limit: limit)
        return JSONResponse(.ok, DeliveryList(deliveries: deliveries.map { WebhookDeliveryResource($0.0, attempts: $0.1) }))
    }

    @Sendable func retry(request: Request, context: Context) async throws -> JSONResponse<Queued> {
        let id = try context.parameters.require("id")
        let eventId = try context.parameters.require("eventId")
        guard try await self.store.webhookEndpoint(id: id) != nil else { throw APIError.webhookNotFound }
        guard try await self.store.retryWebhookMessage(endpointId: id, eventId: eventId, at: self.dependencies.now()) else {
            throw APIError.webhookDeliveryNotFound
        }
        return JSONResponse(.accepted, Queued(eventId: eventId))
    }

    private func actor(_ context: Context) -> String { "admin:\(context.adminKey?.name ?? "?")" }
}
