import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// Related Origin Requests (WebAuthn Level 3 §5.11): `/.well-known/webauthn` lists the other sites that share the RP
/// ID's passkeys, and ceremonies from those origins are accepted.
struct RelatedOriginsTests {
    static let related = ["https://app.example.de", "https://shop.example.net"]

    static func register(_ client: any TestClientProtocol, _ token: String, from origin: String, authenticator: VirtualAuthenticator)
        async throws -> (VirtualAuthenticator.Credential, JSONTestResponse)
    {
        let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: token, json: [:])
        let (credential, response) = try authenticator.respond(toCreationOptions: Array(options.body), origin: origin)
        let verify = try await client.request(
            .post, "/v1/passkeys/registrations/verify", token: token, raw: String(decoding: response, as: UTF8.self))
        return (credential, verify)
    }

    @Test func relatedSitesShareThePasskeys() async throws {
        let configuration = PasskeyTests.configuration { $0.passkeys.relatedOrigins = Self.related }
        try await TestServer.run(configuration: configuration) { client in
            let file = try await client.request(.get, "/.well-known/webauthn")
            #expect(file.status == .ok)
            #expect(file.headers[.contentType] == "application/json; charset=utf-8")
            #expect(file.json["origins"] as? [String] == Self.related)

            let account = try await Flow(client: client).signUp()
            let authenticator = VirtualAuthenticator()
            // Registered on one related site...
            var (credential, registered) = try await Self.register(client, account.token, from: "https://app.example.de", authenticator: authenticator)
            #expect(registered.status == .created, "\(String(decoding: registered.body, as: UTF8.self))")
            // ... used on another, under the same RP ID.
            let options = try await client.request(.post, "/v1/passkeys/authentications/options", json: [:])
            let assertion = try authenticator.respond(toRequestOptions: Array(options.body), credential: &credential, origin: "https://shop.example.net")
            let signedIn = try await client.request(.post, "/v1/passkeys/authentications/verify", raw: String(decoding: assertion, as: UTF8.self))
            #expect(signedIn.status == .ok)
            #expect(signedIn.value("user", "id") == account.userId)
            // A site not on the list is refused.
            let (_, stranger) = try await Self.register(client, account.token, from: "https://evil.example", authenticator: VirtualAuthenticator())
            #expect(stranger.status == .badRequest)
            #expect(stranger.errorCode == "invalid_passkey_registration")
        }
    }

    @Test func withoutRelatedOriginsTheFileIsAbsentAndOnlyTheOwnOriginsCount() async throws {
        try await TestServer.run(configuration: PasskeyTests.configuration()) { client in
            let file = try await client.request(.get, "/.well-known/webauthn")
            #expect(file.status == .notFound)
            #expect(file.errorCode == "not_found")
            let account = try await Flow(client: client).signUp()
            let (_, refused) = try await Self.register(client, account.token, from: "https://app.example.de", authenticator: VirtualAuthenticator())
            #expect(refused.errorCode == "invalid_passkey_registration")
        }
    }

    @Test func configurationTakesWebOriginsOnly() throws {
        let configuration = try TouchstoneConfiguration(environment: ["TOUCHSTONE_RELATED_ORIGINS": "https://app.example.de, https://shop.example.net:8443"])
        #expect(configuration.passkeys.relatedOrigins == ["https://app.example.de", "https://shop.example.net:8443"])
        #expect(try TouchstoneConfiguration(environment: ["TOUCHSTONE_RELATED_ORIGINS": "http://localhost:8080"]).passkeys.relatedOrigins == ["http://localhost:8080"])
        for bad in ["http://example.com", "https://example.com/login", "https://example.com?x=1", "ftp://example.com", "example.com", "https://"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try TouchstoneConfiguration(environment: ["TOUCHSTONE_RELATED_ORIGINS": bad]) }
        }
    }
}
