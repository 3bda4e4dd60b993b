import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneAuth
import TouchstoneCrypto
@testable import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// `POST /v1/session/token`, `GET /.well-known/jwks.json` and the claims of access tokens (RFC 9068).
struct AccessTokenTests {
    static let issuer = "https://auth.example.test"
    static let audience = "https://api.example.test"

    static func configuration(_ customize: (inout TouchstoneConfiguration) -> Void = { _ in }) -> TouchstoneConfiguration {
        PasskeyTests.configuration {
            $0.tokens.issuer = Self.issuer
            $0.tokens.audiences = [Self.audience, "https://reports.example.test"]
            $0.tokens.clientId = "example-ios"
            customize(&$0)
        }
    }

    /// Asks for an access token with a session token.
    static func token(_ client: any TestClientProtocol, _ session: String) async throws -> JSONTestResponse {
        try await client.request(.post, "/v1/session/token", token: session)
    }

    /// An access token for `session`, required to be issued.
    static func accessToken(_ client: any TestClientProtocol, _ session: String) async throws -> String {
        let response = try await Self.token(client, session)
        try #require(response.status == .ok, "token failed: \(String(decoding: response.body, as: UTF8.self))")
        return try #require(response.value("accessToken"))
    }

    /// A verifier that trusts exactly the server's published JWKS, on the test clock.
    static func verifier(_ client: any TestClientProtocol, clock: ManualClock) async throws -> AccessTokenVerifier {
        let jwks = try await client.request(.get, "/.well-known/jwks.json")
        let keys = try await VerificationKey.keys(fromJWKS: jwks.body)
        return AccessTokenVerifier(keys: StaticKeySet(keys), issuer: Self.issuer, audiences: [Self.audience], now: { clock.now })
    }

    @Test func aPasswordSessionGetsAnRFC9068AccessToken() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let account = try await Flow(client: client).signUp("tokens@example.com")
            clock.advance(by: 42)
            let response = try await Self.token(client, account.token)
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(response.value("tokenType") == "Bearer")
            #expect(response.any(["expiresIn"]) as? Int == 300)
            let token = try #require(response.value("accessToken"))

            let header = try SignedToken.header(of: token)
            #expect(header.typ == "at+jwt")
            #expect(header.alg == "ES256")
            let claims = try await Self.verifier(client, clock: clock).verify(token)
            #expect(claims.issuer == Self.issuer)
            #expect(claims.subject == account.userId)
            #expect(claims.audience == [Self.audience, "https://reports.example.test"])
            #expect(claims.clientId == "example-ios")
            #expect(claims.methods == ["pwd"])
            let now = Int64(clock.now.timeIntervalSince1970)
            #expect(claims.issuedAt == now)
            #expect(claims.expiresAt == now + 300)
            #expect(claims.authenticatedAt == now - 42)
            #expect(claims.tokenId.count >= 16)
            // The session id is neither the session token nor its hash.
            #expect(!claims.sessionId.isEmpty)
            #expect(claims.sessionId != account.token && claims.sessionId != Secrets.hash(token: account.token))
            #expect(!token.contains(account.token))
        }
    }

    @Test func theSessionIdIsStablePerSessionAndTokenIdsAreUnique() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp("sid@example.com")
            let verifier = try await Self.verifier(client, clock: clock)
            let first = try await verifier.verify(try await Self.accessToken(client, account.token))
            let second = try await verifier.verify(try await Self.accessToken(client, account.token))
            let other = try await verifier.verify(try await Self.accessToken(client, try await flow.signIn(account.email)))
            #expect(first.sessionId == second.sessionId)
            #expect(first.tokenId != second.tokenId)
            #expect(other.sessionId != first.sessionId)
        }
    }

    @Test func amrFollowsHowTheSessionWasOpened() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp("amr@example.com")
            let verifier = try await Self.verifier(client, clock: clock)
            // Biometric device key.
            let device = TestDeviceKey(.es256)
            let registrationId = try await flow.enroll(account.token, device)
            let biometric = try await flow.login(registrationId, device)
            let biometricToken = try await Self.accessToken(client, try #require(biometric.value("session", "token")))
            #expect(try await verifier.verify(biometricToken).methods == ["hwk", "user"])
            // App PIN.
            #expect(try await flow.setPin(account.token, registrationId, "2468").status == .ok)
            let pin = try await flow.pinLogin(registrationId, "2468")
            let pinToken = try await Self.accessToken(client, try #require(pin.value("session", "token")))
            #expect(try await verifier.verify(pinToken).methods == ["pin"])
            // Passkey.
            let browser = PasskeyTests.Browser(client: client)
            var (credential, registered) = try await browser.register(account.token)
            try #require(registered.status == .created)
            let passkey = try await browser.signIn(&credential)
            let passkeyToken = try await Self.accessToken(client, try #require(passkey.value("session", "token")))
            #expect(try await verifier.verify(passkeyToken).methods == ["hwk", "user"])
        }
    }

    @Test(arguments: [
        ([AuthenticationMethod.password], ["pwd"]),
        ([.pin], ["pin"]),
        ([.biometric], ["hwk", "user"]),
        ([.passkey], ["hwk", "user"]),
        ([.password, .biometric], ["pwd", "hwk", "user", "mfa"]),
        ([.passkey, .biometric], ["hwk", "user"]),
    ])
    func theAMRMapping(methods: [AuthenticationMethod], expected: [String]) {
        #expect(TokenService.authenticationMethodReferences(methods) == expected)
    }

    @Test func endedSessionsGetNoToken() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration(), clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp("ended@example.com")
            // Signed out.
            let signedOut = try await flow.signIn(account.email)
            #expect(try await client.request(.delete, "/v1/session", token: signedOut).status == .noContent)
            let revoked = try await Self.token(client, signedOut)
            #expect(revoked.status == .unauthorized && revoked.errorCode == "unauthenticated")
            // Unknown, and no header at all.
            #expect(try await Self.token(client, "not-a-session").errorCode == "unauthenticated")
            #expect(try await client.request(.post, "/v1/session/token").errorCode == "unauthenticated")
            // Idle past the idle timeout (15 minutes).
            clock.advance(by: 16 * 60)
            let idle = try await Self.token(client, account.token)
            #expect(idle.status == .unauthorized && idle.errorCode == "unauthenticated")
        }
    }

    @Test func aTokenNeverOutlivesItsSession() async throws {
        let clock = ManualClock()
        let configuration = Self.configuration { $0.tokens.accessTokenLifetime = .seconds(3600) }
        try await TestServer.run(configuration: configuration, clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp("short@example.com")
            let device = TestDeviceKey(.es256)
            let registrationId = try await flow.enroll(account.token, device)
            let challenge = try await flow.challenge(registrationId)
            let login = try await flow.finishLogin(
                registrationId,
                challenge: challenge,
                signature: device.signed(challenge),
                extra: ["sessionDurationMinutes": 2]
            )
            let session = try #require(login.value("session", "token"))
            clock.advance(by: 30)
            let response = try await Self.token(client, session)
            #expect(response.any(["expiresIn"]) as? Int == 90)
            // A long-lived session gets the configured lifetime.
            #expect(try await Self.token(client, account.token).any(["expiresIn"]) as? Int == 3600)
        }
    }

    @Test func theJWKSPublishesTheSigningKeyForCaches() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration { $0.tokens.jwksMaxAge = .seconds(120) }, clock: clock) { client in
            let account = try await Flow(client: client).signUp("jwks@example.com")
            let token = try await Self.accessToken(client, account.token)
            let response = try await client.request(.get, "/.well-known/jwks.json")
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "public, max-age=120")
            let keys = try #require(response.json["keys"] as? [[String: Any]])
            #expect(keys.count == 1)
            let key = try #require(keys.first)
            #expect(key["kid"] as? String == (try SignedToken.header(of: token)).kid)
            #expect(key["alg"] as? String == "ES256")
            #expect(key["use"] as? String == "sig")
            #expect(key["kty"] as? String == "EC" && key["crv"] as? String == "P-256")
            // Public parts only.
            #expect(key["d"] == nil)
        }
    }

    @Test func anEdDSAKeySetIsAChoice() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration { $0.tokens.algorithm = .eddsa }, clock: clock) { client in
            let account = try await Flow(client: client).signUp("eddsa@example.com")
            let token = try await Self.accessToken(client, account.token)
            #expect(try SignedToken.header(of: token).alg == "EdDSA")
            #expect(try await Self.verifier(client, clock: clock).verify(token).subject == account.userId)
            let jwks = try await client.request(.get, "/.well-known/jwks.json")
            let key = try #require((jwks.json["keys"] as? [[String: Any]])?.first)
            #expect(key["kty"] as? String == "OKP" && key["crv"] as? String == "Ed25519" && key["alg"] as? String == "EdDSA")
        }
    }

    /// Issuing a token is not an audit event (the trail would grow with every API call); never logging it is checked by
    /// `AuditTests.secretsNeverReachTheLogsOrTheTrail`.
    @Test func issuingATokenIsNotAudited() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let account = try await Flow(client: client).signUp("quiet@example.com")
            _ = try await Self.accessToken(client, account.token)
            let events = try await Flow(client: client).events(account.token)
            #expect(events.map { $0["type"] as? String } == ["user.created"])
        }
    }
}
