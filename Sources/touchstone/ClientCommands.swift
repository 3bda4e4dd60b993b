import ArgumentParser
import Foundation
import TouchstoneServer
import TouchstoneStore

/// `touchstone clients ...`: the OpenID provider's registered clients (issue #31, §1).
struct Clients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Register and manage the OpenID Connect clients (apps that sign users in with Touchstone).",
        subcommands: [Create.self, List.self, Delete.self, RotateSecret.self]
    )

    /// A client as the commands print it: never a secret but the one just made.
    struct Output: Encodable {
        var clientId: String
        var clientSecret: String?
        var name: String
        var redirectUris: [String]
        var postLogoutRedirectUris: [String]
        var backchannelLogoutUri: String?
        var `public`: Bool
        var firstParty: Bool
        var createdAt: String

        init(_ record: OAuthClientRecord, secret: String? = nil) {
            self.clientId = record.id
            self.clientSecret = secret
            self.name = record.name
            self.redirectUris = record.redirectURIs
            self.postLogoutRedirectUris = record.postLogoutRedirectURIs
            self.backchannelLogoutUri = record.backchannelLogoutURI
            self.public = record.isPublic
            self.firstParty = record.firstParty
            self.createdAt = record.createdAt.rfc3339
        }

        enum CodingKeys: String, CodingKey {
            case clientId, clientSecret, name, redirectUris, postLogoutRedirectUris, backchannelLogoutUri, `public`, firstParty, createdAt
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.clientId, forKey: .clientId)
            try container.encodeIfPresent(self.clientSecret, forKey: .clientSecret)
            try container.encode(self.name, forKey: .name)
            try container.encode(self.redirectUris, forKey: .redirectUris)
            try container.encode(self.postLogoutRedirectUris, forKey: .postLogoutRedirectUris)
            try container.encode(self.backchannelLogoutUri, forKey: .backchannelLogoutUri)
            try container.encode(self.public, forKey: .public)
            try container.encode(self.firstParty, forKey: .firstParty)
            try container.encode(self.createdAt, forKey: .createdAt)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a client and print it as JSON; a confidential client's secret is shown this once (only its hash is stored)."
        )

        @Option(name: .long, help: "The client's name, shown on the consent page.")
        var name: String

        @Option(name: .customLong("redirect-uri"), help: "A redirect URI (repeatable): https, http on 127.0.0.1/[::1]/localhost, or an app's reverse-domain scheme.")
        var redirectURIs: [String] = []

        @Option(name: .customLong("post-logout-redirect-uri"), help: "Where RP-initiated logout may return (repeatable).")
        var postLogoutRedirectURIs: [String] = []

        @Option(name: .customLong("backchannel-logout-uri"), help: "Where back-channel logout tokens are posted.")
        var backchannelLogoutURI: String?

        @Flag(name: .customLong("public"), help: "A public client (native or single-page app): no secret, PKCE only.")
        var isPublic = false

        @Flag(name: .customLong("first-party"), help: "A first-party client: no consent page.")
        var firstParty = false

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            var registration = OAuthClients.Registration(name: self.name, redirectURIs: self.redirectURIs)
            registration.postLogoutRedirectURIs = self.postLogoutRedirectURIs
            registration.backchannelLogoutURI = self.backchannelLogoutURI
            registration.isPublic = self.isPublic
            registration.firstParty = self.firstParty
            let created: OAuthClients.Created
            do {
                created = try await withStore(database: self.database) { store in try await OAuthClients.create(registration, store: store) }
            } catch let error as OAuthClients.InvalidRegistration {
                throw ValidationError(error.description)
            }
            try printJSON(Output(created.record, secret: created.secret))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registered clients as JSON (never their secrets).")

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let clients = try await withStore(database: self.database) { store in try await store.clients() }
            try printJSON(["clients": clients.map { Output($0) }])
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a client; its secret and redirect URIs stop working.")

        @Argument(help: "The client id.")
        var clientId: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let deleted = try await withStore(database: self.database) { store in try await OAuthClients.delete(id: self.clientId, store: store) }
            guard deleted else { throw ValidationError("no client \(self.clientId)") }
            try printJSON(["deleted": self.clientId])
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Give a confidential client a new secret and print it once; the old one stops working."
        )

        @Argument(help: "The client id.")
        var clientId: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let secret = try await withStore(database: self.database) { store in
                try await OAuthClients.rotateSecret(id: self.clientId, store: store)
            }
            guard let secret else { throw ValidationError("no confidential client \(self.clientId) (a public client has no secret)") }
            try printJSON(["clientId": self.clientId, "clientSecret": secret])
        }
    }
}
