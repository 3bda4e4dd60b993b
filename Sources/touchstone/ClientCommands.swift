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

        @Flag(name: .customLong("ciba"), help: "May ask for sign-ins approved on the user's phone from its backend (OpenID CIBA, poll mode).")
        var ciba = false

        @Flag(name: .customLong("dpop"), help: "Gets tokens only with a DPoP proof (RFC 9449): every token it holds is bound to its key.")
        var dpop = false

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            var registration = OAuthClients.Registration(name: self.name, redirectURIs: self.redirectURIs)
            registration.postLogoutRedirectURIs = self.postLogoutRedirectURIs
            registration.backchannelLogoutURI = self.backchannelLogoutURI
            registration.isPublic = self.isPublic
            registration.firstParty = self.firstParty
            registration.ciba = self.ciba
            registration.dpopBoundAccessTokens = self.dpop
            let created: OAuthClients.Created
            do {
                created = try await withStore(database: self.database) { store in try await OAuthClients.create(registration, store: store) }
            } catch let error as OAuthClients.InvalidRegistration {
                throw ValidationError(error.description)
            }
            try printJSON(OAuthClientResource(created.record, secret: created.secret))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registered clients as JSON (never their secrets).")

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let clients = try await withStore(database: self.database) { store in try await store.clients() }
            try printJSON(["clients": clients.map { OAuthClientResource($0) }])
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
