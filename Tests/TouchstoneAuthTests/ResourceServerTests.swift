import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Testing
import TouchstoneAuth
import TouchstoneDPoP
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// A real Touchstone server and a real Hummingbird resource server, both on loopback: the resource server fetches the
/// issuer's JWKS over HTTP (async-http-client) and guards its routes with ``TouchstoneAuthMiddleware``.
struct ResourceServerTests {
    static let issuer = "https://auth.example.test"
    static let audience = "https://api.example.test"

    static func touchstoneConfiguration() -> TouchstoneConfiguration {
        TestServer.configuration {
            $0.tokens.issuer = Self.issuer
            $0.tokens.audiences = [Self.audience]
            $0.tokens.publicationLead = .seconds(300)
        }
    }

    /// The app's API: `/me` (any valid token), `/sensitive` (a device key or passkey within 5 minutes), and routes
    /// whose verifiers expect another issuer or audience.
    static func resourceServer(touchstonePort: Int, clock: ManualClock) -> some ApplicationProtocol {
        let keys = JWKSCache(
            fetcher: HTTPJWKSFetcher(url: "http://127.0.0.1:\(touchstonePort)/.well-known/jwks.json"),
            now: { clock.now }
        )
        func verifier(issuer: String = Self.issuer, audience: String = Self.audience) -> AccessTokenVerifier {
            AccessTokenVerifier(keys: keys, issuer: issuer, audiences: [audience], now: { clock.now })
        }
        let router = Router(context: TouchstoneAuthContext.self)
        router.group("/me").add(middleware: TouchstoneAuthMiddleware(verifier: verifier())).get { _, context in
            let caller = try context.requireTouchstoneCaller()
            return "\(caller.userId) \(caller.sessionId) \(caller.methods.joined(separator: ","))"
        }
        router.group("/sensitive")
            .add(middleware: TouchstoneAuthMiddleware(verifier: verifier()))
            .add(middleware: TouchstoneRequirementMiddleware(maxAge: 300, deviceKeyOrPasskey: true, now: { clock.now }))
            .get { _, _ in "ok" }
        router.group("/other-issuer").add(middleware: TouchstoneAuthMiddleware(verifier: verifier(issuer: "https://elsewhere.example")))
            .get { _, _ in "ok" }
        router.group("/other-audience").add(middleware: TouchstoneAuthMiddleware(verifier: verifier(audience: "https://billing.example")))
            .get { _, _ in "ok" }
        // DPoP (issue #43): the caller's key, and a route that takes only bound tokens.
        router.group("/key").add(middleware: TouchstoneAuthMiddleware(verifier: verifier(), now: { clock.now })).get { _, context in
            try context.requireTouchstoneCaller().dpopThumbprint ?? "bearer"
        }
        // A shared replay cache that cannot answer: a bound token cannot be checked.
        struct BrokenCache: DPoPReplayCache {
            func use(jti: String, thumbprint: String, until: Date, at now: Date) async throws -> Bool { throw CancellationError() }
        }
        router.group("/cache-down")
            .add(middleware: TouchstoneAuthMiddleware(verifier: verifier(), dpop: DPoPBinding(replayCache: BrokenCache()), now: { clock.now }))
            .get { _, _ in "ok" }
        router.group("/bound-only")
            .add(middleware: TouchstoneAuthMiddleware(verifier: verifier(), dpop: DPoPBinding(requireBoundTokens: true), now: { clock.now }))
            .get { _, _ in "ok" }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    struct Answer {
        var status: HTTPResponse.Status
        var body: String
        var challenge: String?
        var code: String? {
            ((try? JSONSerialization.jsonObject(with: Data(self.body.utf8))) as? [String: [String: String]])?["error"]?["code"]
        }
    }

    static func call(_ api: any TestClientProtocol, _ path: String, token: String?) async throws -> Answer {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        let response = try await api.executeRequest(uri: path, method: .get, headers: headers, body: nil)
        return Answer(status: response.status, body: String(buffer: response.body), challenge: response.headers[.wwwAuthenticate])
    }

    /// Runs a Touchstone server (with an admin key) and the resource server on loopback.
    static func withServers(
        _ body: @Sendable (_ touchstone: any TestClientProtocol, _ adminKey: String, _ api: any TestClientProtocol, _ clock: ManualClock) async throws -> Void
    ) async throws {
        let clock = ManualClock(Date())
        try await TestServer.runWithAdminKey(.live, configuration: Self.touchstoneConfiguration(), clock: clock) { touchstone, adminKey, _ in
            let port = try #require(touchstone.port)
            try await Self.resourceServer(touchstonePort: port, clock: clock).test(.live) { api in
                try await body(touchstone, adminKey, api, clock)
            }
        }
    }

    static func signUp(_ touchstone: any TestClientProtocol, _ email: String) async throws -> (session: String, userId: String) {
        let response = try await touchstone.request(.post, "/v1/users", json: ["email": email, "password": "correct horse battery"])
        return (try #require(response.value("session", "token")), try #require(response.value("user", "id")))
    }

    static func accessToken(_ touchstone: any TestClientProtocol, _ session: String) async throws -> String {
        let response = try await touchstone.request(.post, "/v1/session/token", token: session)
        return try #require(response.value("accessToken"), "\(response.status) \(String(decoding: response.body, as: UTF8.self))")
    }

    @Test func aValidTokenIdentifiesTheCaller() async throws {
        try await Self.withServers { touchstone, _, api, _ in
            let (session, userId) = try await Self.signUp(touchstone, "rs@example.com")
            let answer = try await Self.call(api, "/me", token: try await Self.accessToken(touchstone, session))
            #expect(answer.status == .ok)
            #expect(answer.body.hasPrefix("\(userId) ") && answer.body.hasSuffix(" pwd"))
        }
    }

    @Test func badTokensAre401WithABearerChallenge() async throws {
        try await Self.withServers { touchstone, _, api, clock in
            let (session, _) = try await Self.signUp(touchstone, "forger@example.com")
            let token = try await Self.accessToken(touchstone, session)
            let parts = token.split(separator: ".").map(String.init)
            let claims = try SignedToken.unverifiedPayload(of: token, as: AccessTokenClaims.self)
            var elevated = claims
            elevated.subject = "someone-else"
            let tampered = parts[0] + "." + TestIssuer.base64URL(try JSONEncoder().encode(elevated)) + "." + parts[2]
            // The issuer's real public key, as a forger would fetch it.
            let jwks = try await touchstone.request(.get, "/.well-known/jwks.json")
            let jwk = try #require(try JSONDecoder().decode(PublicJWKSet.self, from: jwks.body).keys.first)
            let publicKey = try ES256PublicKey(parameters: (x: try #require(jwk.x), y: try #require(jwk.y)))
            let hmac = JWTKeyCollection()
            await hmac.add(hmac: HMACKey(from: publicKey.pemRepresentation), digestAlgorithm: .sha256, kid: JWKIdentifier(string: jwk.kid ?? ""))
            var header = JWTHeader()
            header.typ = "at+jwt"
            let hs256 = try await hmac.sign(claims, kid: JWKIdentifier(string: jwk.kid ?? ""), header: header)
            let none = TestIssuer.base64URL(Data(#"{"alg":"none","typ":"at+jwt","kid":"\#(jwk.kid ?? "")"}"#.utf8)) + "." + parts[1] + "."
            let stranger = JWTKeyCollection()
            await stranger.add(ecdsa: ES256PrivateKey(), kid: "someone-elses-key")
            let unknownKid = try await stranger.sign(claims, kid: "someone-elses-key", header: header)

            let cases: [(String, String?, String)] = [
                ("no token", nil, "/me"),
                ("tampered", tampered, "/me"),
                ("alg none", none, "/me"),
                ("HS256 signed with the public key", hs256, "/me"),
                ("unknown kid", unknownKid, "/me"),
                ("wrong issuer", token, "/other-issuer"),
                ("wrong audience", token, "/other-audience"),
            ]
            // Not a bearer token at all.
            let basic = try await api.executeRequest(uri: "/me", method: .get, headers: [.authorization: "Basic dXNlcjpwYXNz"], body: nil)
            #expect(basic.status == .unauthorized && String(buffer: basic.body).contains("invalid_token"))
            for (name, candidate, path) in cases {
                let answer = try await Self.call(api, path, token: candidate)
                #expect(answer.status == .unauthorized, "\(name)")
                #expect(answer.code == "invalid_token", "\(name): \(answer.body)")
                #expect(answer.challenge?.hasPrefix("Bearer") == true, "\(name)")
            }
            // Expired: the same token after its five minutes (and the leeway).
            #expect(try await Self.call(api, "/me", token: token).status == .ok)
            clock.advance(by: 331)
            let expired = try await Self.call(api, "/me", token: token)
            #expect(expired.status == .unauthorized && expired.body.contains("expired"))
            #expect(expired.challenge == #"Bearer error="invalid_token""#)
        }
    }

    @Test func aKeyRotationIsPickedUpWithoutARestart() async throws {
        try await Self.withServers { touchstone, adminKey, api, clock in
            let (session, _) = try await Self.signUp(touchstone, "rotation@example.com")
            let before = try await Self.accessToken(touchstone, session)
            #expect(try await Self.call(api, "/me", token: before).status == .ok)
            // A scheduled-style rotation: published now, signing after the lead time (300 s, the JWKS max-age).
            let rotated = try await touchstone.request(.post, "/v1/admin/signing-keys/rotate", token: adminKey, json: [:])
            let newKid = try #require(rotated.value("kid"))
            clock.advance(by: 300)
            let after = try await Self.accessToken(touchstone, session)
            #expect(try SignedToken.header(of: after).kid == newKid)
            #expect(try await Self.call(api, "/me", token: after).status == .ok)
            // And an emergency rotation that signs at once: the unknown kid makes the resource server refresh.
            let urgent = try await touchstone.request(.post, "/v1/admin/signing-keys/rotate", token: adminKey, json: ["immediately": true])
            let urgentToken = try await Self.accessToken(touchstone, session)
            #expect(try SignedToken.header(of: urgentToken).kid == urgent.value("kid"))
            #expect(try await Self.call(api, "/me", token: urgentToken).status == .ok)
        }
    }

    @Test func stepUpRequirementsAskForAFreshDeviceKeySignIn() async throws {
        try await Self.withServers { touchstone, _, api, clock in
            let (session, _) = try await Self.signUp(touchstone, "stepup@example.com")
            let password = try await Self.call(api, "/sensitive", token: try await Self.accessToken(touchstone, session))
            #expect(password.status == .unauthorized)
            #expect(password.code == "insufficient_user_authentication")
            #expect(password.challenge?.contains(#"error="insufficient_user_authentication""#) == true)

            // A biometric sign-in qualifies, for five minutes.
            let device = TestDeviceKey(.es256)
            let start = try await touchstone.request(
                .post,
                "/v1/biometrics/registrations/start",
                token: session,
                json: ["publicKey": device.publicKey(), "algorithm": "ES256", "deviceId": "phone-1"]
            )
            let registrationId = try #require(start.value("registrationId"))
            let finish = try await touchstone.request(
                .post,
                "/v1/biometrics/registrations/finish",
                token: session,
                json: ["registrationId": registrationId, "signature": device.signed(try #require(start.value("challenge")))]
            )
            try #require(finish.status == .created)
            let challenge = try #require(
                try await touchstone.request(.post, "/v1/biometrics/authentications/start", json: ["registrationId": registrationId])
                    .value("challenge")
            )
            let login = try await touchstone.request(
                .post,
                "/v1/biometrics/authentications/finish",
                json: ["registrationId": registrationId, "challenge": challenge, "signature": device.signed(challenge)]
            )
            let biometricSession = try #require(login.value("session", "token"))
            #expect(try await Self.call(api, "/sensitive", token: try await Self.accessToken(touchstone, biometricSession)).status == .ok)
            clock.advance(by: 301)
            let stale = try await Self.call(api, "/sensitive", token: try await Self.accessToken(touchstone, biometricSession))
            #expect(stale.code == "insufficient_user_authentication")
            #expect(stale.challenge?.contains("max_age=300") == true)
        }
    }
}
