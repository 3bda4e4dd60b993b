import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import Testing
import TouchstoneAuth
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// `POST /v1/tokens/introspect` (RFC 7662): active tokens with their claims, exactly `{"active": false}` otherwise.
struct IntrospectionTests {
    static func introspect(_ client: any TestClientProtocol, _ adminKey: String, token: String, form: Bool = false) async throws
        -> JSONTestResponse
    {
        if form {
            let body = "token=\(token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)&token_type_hint=access_token"
            return try await client.request(
                .post,
                "/v1/tokens/introspect",
                token: adminKey,
                raw: body,
                headers: [.contentType: "application/x-www-form-urlencoded"]
            )
        }
        return try await client.request(.post, "/v1/tokens/introspect", token: adminKey, json: ["token": token])
    }

    static func isExactlyInactive(_ response: JSONTestResponse) -> Bool {
        response.status == .ok && String(decoding: response.body, as: UTF8.self) == #"{"active":false}"#
    }

    @Test(arguments: [false, true]) func anActiveTokenAnswersItsClaims(form: Bool) async throws {
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(configuration: AccessTokenTests.configuration(), clock: clock) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("introspect@example.com")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            let claims = try await AccessTokenTests.verifier(client, clock: clock).verify(token)
            let response = try await Self.introspect(client, adminKey, token: token, form: form)
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(response.any(["active"]) as? Bool == true)
            #expect(response.value("sub") == account.userId)
            #expect(response.value("sid") == claims.sessionId)
            #expect(response.any(["exp"]) as? Int64 == claims.expiresAt)
            #expect(response.any(["iat"]) as? Int64 == claims.issuedAt)
            #expect(response.any(["auth_time"]) as? Int64 == claims.authenticatedAt)
            #expect(response.any(["amr"]) as? [String] == ["pwd"])
            #expect(response.value("client_id") == "example-ios")
            #expect(response.value("token_type") == "Bearer")
            #expect(response.value("iss") == AccessTokenTests.issuer)
        }
    }

    @Test func aSignOutEndsTheTokenAtOnce() async throws {
        try await TestServer.runWithAdminKey(configuration: AccessTokenTests.configuration()) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("signout@example.com")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            #expect(try await Self.introspect(client, adminKey, token: token).any(["active"]) as? Bool == true)
            #expect(try await client.request(.delete, "/v1/session", token: account.token).status == .noContent)
            #expect(Self.isExactlyInactive(try await Self.introspect(client, adminKey, token: token)))
        }
    }

    @Test func anAdminSignOutEverywhereEndsTheTokenToo() async throws {
        try await TestServer.runWithAdminKey(configuration: AccessTokenTests.configuration()) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("everywhere@example.com")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            let signOut = try await client.request(.post, "/v1/admin/users/\(account.userId)/sign-out", token: adminKey)
            #expect(signOut.status == .ok)
            #expect(Self.isExactlyInactive(try await Self.introspect(client, adminKey, token: token)))
        }
    }

    @Test func anExpiredTokenIsInactive() async throws {
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(configuration: AccessTokenTests.configuration(), clock: clock) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("expired@example.com")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            clock.advance(by: 299)
            #expect(try await Self.introspect(client, adminKey, token: token).any(["active"]) as? Bool == true)
            clock.advance(by: 2)
            #expect(Self.isExactlyInactive(try await Self.introspect(client, adminKey, token: token)))
        }
    }

    @Test func anIdleExpiredSessionEndsItsTokens() async throws {
        let clock = ManualClock()
        let configuration = AccessTokenTests.configuration { $0.tokens.accessTokenLifetime = .seconds(3600) }
        try await TestServer.runWithAdminKey(configuration: configuration, clock: clock) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("idle@example.com")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            clock.advance(by: 16 * 60)
            #expect(Self.isExactlyInactive(try await Self.introspect(client, adminKey, token: token)))
        }
    }

    /// Tokens that fail a check of their own: each answers exactly `{"active": false}`.
    @Test func forgedAndBrokenTokensAreInactive() async throws {
        try await TestServer.runWithAdminKey(configuration: AccessTokenTests.configuration()) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("forged@example.com")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            let parts = token.split(separator: ".").map(String.init)
            let payload = try #require(Base64.urlDecodeCanonical(parts[1]))
            var claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
            claims["sub"] = "someone-else"
            let tamperedPayload = Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: claims)))
            // A key the server never had, with the server's own kid.
            let header = try SignedToken.header(of: token)
            let stranger = JWTKeyCollection()
            await stranger.add(ecdsa: ES256PrivateKey(), kid: JWKIdentifier(string: header.kid ?? ""))
            var strangerHeader = JWTHeader()
            strangerHeader.typ = "at+jwt"
            let strangerClaims = try SignedToken.unverifiedPayload(of: token, as: AccessTokenClaims.self)
            let forged = try await stranger.sign(strangerClaims, kid: JWKIdentifier(string: header.kid ?? ""), header: strangerHeader)
            // An unknown kid.
            let unknown = JWTKeyCollection()
            await unknown.add(ecdsa: ES256PrivateKey(), kid: "unknown-kid")
            let unknownKid = try await unknown.sign(strangerClaims, kid: "unknown-kid", header: strangerHeader)
            let cases = [
                "tampered claims": parts[0] + "." + tamperedPayload + "." + parts[2],
                "signed by another key under the server's kid": forged,
                "an unknown kid": unknownKid,
                "alg none": Base64.urlEncode(Array(#"{"alg":"none","typ":"at+jwt"}"#.utf8)) + "." + parts[1] + ".",
                "not a JWT": "not-a-jwt",
                "a session token": account.token,
            ]
            for (name, candidate) in cases {
                #expect(Self.isExactlyInactive(try await Self.introspect(client, adminKey, token: candidate)), "\(name)")
            }
        }
    }

    @Test func introspectionNeedsAnAdminKeyAndAToken() async throws {
        try await TestServer.runWithAdminKey(configuration: AccessTokenTests.configuration()) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("guarded@example.com")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            // A user's session is not an admin key; an access token is not even a well-formed one (longer than any key).
            #expect(try await Self.introspect(client, account.token, token: token).errorCode == "admin_key_required")
            #expect(try await Self.introspect(client, token, token: token).errorCode == "unauthenticated")
            let anonymous = try await client.request(.post, "/v1/tokens/introspect", json: ["token": token])
            #expect(anonymous.status == .unauthorized && anonymous.errorCode == "unauthenticated")
            // No token.
            let missing = try await client.request(.post, "/v1/tokens/introspect", token: adminKey, json: [:])
            #expect(missing.status == .badRequest && missing.errorCode == "invalid_request")
            let emptyForm = try await client.request(
                .post,
                "/v1/tokens/introspect",
                token: adminKey,
                raw: "token_type_hint=access_token",
                headers: [.contentType: "application/x-www-form-urlencoded"]
            )
            #expect(emptyForm.status == .badRequest && emptyForm.errorCode == "invalid_request")
            let tooLong = try await client.request(.post, "/v1/tokens/introspect", token: adminKey, json: ["token": String(repeating: "a", count: 17 * 1024)])
            #expect(tooLong.status == .badRequest && tooLong.errorCode == "invalid_request")
        }
    }
}
