import ArgumentParser
import Crypto
import Foundation
import Logging
import TouchstoneServer
import TouchstoneStore
import TouchstoneWebhooks

/// `touchstone webhooks ...`: the endpoints that receive events (issue #32). Running servers use a new or changed
/// endpoint for the next event (the outbox joins the endpoints when an event is written).
struct Webhooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the webhook endpoints that receive Touchstone's events (Standard Webhooks).",
        discussion: """
            Uses the server's configuration: TOUCHSTONE_DATABASE_URL, TOUCHSTONE_KEY_ENCRYPTION_KEY (the secrets are \
            sealed under it), TOUCHSTONE_WEBHOOKS_ALLOW_HTTP and TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE. docs/webhooks.md \
            lists the event types.
            """,
        subcommands: [Create.self, List.self, Secret.self, Enable.self, Disable.self, RotateSecret.self, Test.self, Delete.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an endpoint and print it as JSON, with its signing secret (whsec_...); `webhooks secret ID` shows it again."
        )

        @Option(name: .long, help: "Where events are posted: https (http only to loopback unless TOUCHSTONE_WEBHOOKS_ALLOW_HTTP=on).")
        var url: String

        @Option(name: .customLong("event"), help: "An event type to receive (repeatable); none: every type.")
        var events: [String] = []

        @Option(name: .long, help: "What the endpoint is for (at most 500 characters).")
        var description: String = ""

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let created = try await withWebhookStore(database: self.database) { store, configuration, key in
                try await WebhookEndpoints.create(
                    url: self.url, events: self.events, description: self.description, policy: configuration.webhooks.destinations,
                    keyEncryptionKey: key, store: store)
            }
            try printJSON(WebhookEndpointResource(created.record, secret: created.secret))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the endpoints as JSON (never their secrets).")

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let endpoints = try await withStore(database: self.database) { store in try await store.webhookEndpoints() }
            try printJSON(["endpoints": endpoints.map { WebhookEndpointResource($0) }])
        }
    }

    struct Secret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print an endpoint's current signing secret (opened with the key-encryption key).")

        @Argument(help: "The endpoint id.")
        var id: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let secret = try await withWebhookStore(database: self.database) { store, _, key -> WebhookSecret in
                guard let endpoint = try await store.webhookEndpoint(id: self.id) else { throw ValidationError("no webhook endpoint \(self.id)") }
                return try WebhookEndpoints.secret(of: endpoint, keyEncryptionKey: key)
            }
            try printJSON(["id": self.id, "secret": secret.description])
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable an endpoint: events are queued for it again.")

        @Argument(help: "The endpoint id.")
        var id: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws { try await setEnabled(true, id: self.id, database: self.database) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an endpoint: no events are queued for it while it is.")

        @Argument(help: "The endpoint id.")
        var id: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws { try await setEnabled(false, id: self.id, database: self.database) }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Give an endpoint a new secret and print it; the old one keeps signing beside it for 24 hours."
        )

        @Argument(help: "The endpoint id.")
        var id: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let secret = try await withWebhookStore(database: self.database) { store, _, key in
                try await WebhookEndpoints.rotateSecret(id: self.id, keyEncryptionKey: key, store: store)
            }
            guard let secret else { throw ValidationError("no webhook endpoint \(self.id)") }
            try printJSON(["id": self.id, "secret": secret.description])
        }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue a webhook.test event for an endpoint, whatever it subscribes to; a running server sends it within a second."
        )

        @Argument(help: "The endpoint id.")
        var id: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let eventId = try await withStore(database: self.database) { store in try await WebhookEndpoints.sendTest(id: self.id, store: store) }
            guard let eventId else { throw ValidationError("no enabled webhook endpoint \(self.id)") }
            try printJSON(["id": self.id, "eventId": eventId])
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an endpoint with its queued events and delivery history.")

        @Argument(help: "The endpoint id.")
        var id: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let deleted = try await withStore(database: self.database) { store in try await WebhookEndpoints.delete(id: self.id, store: store) }
            guard deleted else { throw ValidationError("no webhook endpoint \(self.id)") }
            try printJSON(["deleted": self.id])
        }
    }
}

private func setEnabled(_ enabled: Bool, id: String, database: String?) async throws {
    let record = try await withStore(database: database) { store, configuration, _ in
        try await WebhookEndpoints.update(id: id, .init(enabled: enabled), policy: configuration.webhooks.destinations, store: store)
    }
    guard let record else { throw ValidationError("no webhook endpoint \(id)") }
    try printJSON(WebhookEndpointResource(record))
}

/// The store, the configuration and the key-encryption key the server seals the secrets with; a refused value
/// (URL, event type, description) is a usage error with its message.
private func withWebhookStore<T>(
    database: String?,
    _ body: (any TouchstoneStore, TouchstoneConfiguration, SymmetricKey) async throws -> T
) async throws -> T {
    do {
        return try await withStore(database: database) { store, configuration, logger in
            let key = try KeyEncryptionKey.resolve(configuration, randomBytes: TouchstoneDependencies.live.randomBytes, logger: logger)
            return try await body(store, configuration, key)
        }
    } catch let error as WebhookError {
        throw ValidationError(error.message)
    }
}
