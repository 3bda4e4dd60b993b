import Foundation
import HummingbirdTesting
import Testing
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// The SDK's native passkeys, on Linux: ``PasskeyLogin`` with a virtual authenticator behind ``PasskeyAuthorizer``,
/// against the real server.
struct PasskeyLoginTests {
    static let password = "correct horse battery"

    static var configuration: TouchstoneConfiguration {
        TestServer.configuration {
            $0.passkeys.rpId = "app.example"
            $0.passkeys.origins = ["https://app.example"]
        }
    }

    static func phone(_ client: any TestClientProtocol, domains: Set<String> = ["app.example"]) -> (PasskeyLogin, VirtualPasskeyAuthorizer) {
        let authorizer = VirtualPasskeyAuthorizer(associatedDomains: domains)
        return (PasskeyLogin(client: TouchstoneClient(transport: TestClientTransport(client)), authorizer: authorizer), authorizer)
    }

    @Test func registerThenSignInWithAndWithoutAnEmailAndWithAutoFill() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let (passkeys, authorizer) = Self.phone(client)
            let session = try await passkeys.client.createUser(email: "native@example.com", password: Self.password)
            let passkey = try await passkeys.register(session: session, name: "iPhone")
            #expect(passkey.name == "iPhone")
            #expect(authorizer.credentials.count == 1)

            let usernameLess = try await passkeys.signIn()
            #expect(usernameLess.user.id == session.user.id)
            #expect(usernameLess.session.methods == ["passkey"])
            let withEmail = try await passkeys.signIn(email: "native@example.com")
            #expect(withEmail.user.id == session.user.id)
            let autoFill = try await passkeys.signInWithAutoFill()
            #expect(autoFill.user.id == session.user.id)
            #expect(authorizer.modes == [.modal, .modal, .autoFill])
            // The same device cannot make a second passkey for the account.
            await #expect(throws: PasskeyError(.matchedExcludedCredential, "")) { try await passkeys.register(session: session) }
        }
    }

    @Test func aCancelledSheetIsReportedAndNothingIsSent() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let (passkeys, authorizer) = Self.phone(client)
            let session = try await passkeys.client.createUser(email: "cancel@example.com", password: Self.password)
            authorizer.enqueue(.fail(.cancelled))
            await #expect(throws: PasskeyError(.cancelled, "")) { try await passkeys.register(session: session) }
            #expect(try await passkeys.client.passkeys(token: session.session.token).isEmpty)
            _ = try await passkeys.register(session: session)
            authorizer.enqueue(.fail(.cancelled))
            await #expect(throws: PasskeyError(.cancelled, "")) { try await passkeys.signIn() }
        }
    }

    @Test func aPasskeyTheServerNoLongerKnowsIsReported() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let (passkeys, _) = Self.phone(client)
            let session = try await passkeys.client.createUser(email: "forgotten@example.com", password: Self.password)
            let passkey = try await passkeys.register(session: session)
            try await passkeys.client.deletePasskey(token: session.session.token, id: passkey.id)
            await #expect(throws: PasskeyError(.credentialNotFound, "", serverCode: "passkey_not_found")) { try await passkeys.signIn() }
        }
    }

    @Test func noPasskeyOnTheDevice() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let (passkeys, _) = Self.phone(client)
            await #expect(throws: PasskeyError(.noCredentials, "")) { try await passkeys.signIn() }
        }
    }

    /// The app is associated with another domain than the server's relying party: the OS refuses before any sheet.
    @Test func aWrongRelyingPartyFails() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let (passkeys, authorizer) = Self.phone(client, domains: ["other.example"])
            let session = try await passkeys.client.createUser(email: "wrongrp@example.com", password: Self.password)
            await #expect(throws: PasskeyError(.failed, "")) { try await passkeys.register(session: session) }
            await #expect(throws: PasskeyError(.failed, "")) { try await passkeys.signIn() }
            #expect(authorizer.credentials.isEmpty)
        }
    }

    @Test func unreadableServerOptionsAreAnInvalidResponse() {
        #expect(throws: PasskeyError(.invalidResponse, "")) { try PasskeyRegistrationRequest(optionsJSON: Data("{}".utf8)) }
        #expect(throws: PasskeyError(.invalidResponse, "")) { try PasskeyAssertionRequest(optionsJSON: Data(#"{"rpId":"a","challenge":"!"}"#.utf8)) }
    }

    @Test func aSessionWithoutARecentPasswordCannotAddOne() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration, clock: clock) { client in
            let (passkeys, _) = Self.phone(client)
            let session = try await passkeys.client.createUser(email: "stale@example.com", password: Self.password)
            clock.advance(by: 11 * 60)
            _ = try await passkeys.client.currentSession(token: session.session.token)
            await #expect(throws: PasskeyError(.server, "", serverCode: "reauthentication_required")) { try await passkeys.register(session: session) }
        }
    }
}
