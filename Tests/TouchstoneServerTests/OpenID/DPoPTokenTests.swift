import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting

/// DPoP (RFC 9449) at the provider: tokens bound at the token endpoint, used at UserInfo, refreshed by a public
/// client with its key only, codes bound by `dpop_jkt`, clients that must send proofs, nonces (issue #43).
struct DPoPTokenTests {
    typealias Flow = AuthorizationCodeFlowTests
    static let issuer = "https://auth.example.com"
    static let tokenURL = issuer + "/oauth2/token"
    static let userinfoURL = issuer + "/oauth2/userinfo"

    static func configuration(_ customize: @escaping (inout TouchstoneConfiguration) -> Void = { _ in }) -> TouchstoneConfiguration {
        TestServer.configuration {
            $0.tokens.issuer = Self.issuer
            customize(&$0)
        }
    }

    /// The code for `app` after a browser sign-in, and its PKCE verifier.
    static func code(_ client: any TestClientProtocol, _ app: OpenIDTestClient, email: String, extra: [(String, String)] = [])
        async throws -> (code: String, verifier: String)
    {
        var browser = OpenIDBrowser(client)
        let (uri, verifier, _) = app.authorize(extra: extra)
        let done = try await Flow.signInAndAllow(&browser, uri, email: email)
        return (try #require(OpenIDBrowser.query(done.location ?? "")["code"], "\(done.status) \(done.html)"), verifier)
    }

    static func exchange(_ client: any TestClientProtocol, _ app: OpenIDTestClient, _ code: String, _ verifier: String, proof: String?)
        async throws -> JSONTestResponse
    {
        var headers = app.headers
        if let proof { headers[.init("DPoP")!] = proof }
        return try await client.form(
            "/oauth2/token",
            "grant_type=authorization_code&code=\(code)&redirect_uri=\(OpenIDBrowser.encode(app.redirectURI))&code_verifier=\(verifier)"
                + app.publicClientParameter,
            headers: headers
        )
    }

    static func refresh(_ client: any TestClientProtocol, _ app: OpenIDTestClient, _ token: String, proof: String?) async throws
        -> JSONTestResponse
    {
        var headers = app.headers
        if let proof { headers[.init("DPoP")!] = proof }
        return try await client.form("/oauth2/token", "grant_type=refresh_token&refresh_token=\(token)" + app.publicClientParameter, headers: headers)
    }

    static func userinfo(_ client: any TestClientProtocol, _ authorization: String, proof: String?) async throws -> JSONTestResponse {
        var headers: HTTPFields = [.authorization: authorization]
        if let proof { headers[.init("DPoP")!] = proof }
        return try await client.request(.get, "/oauth2/userinfo", headers: headers)
    }

    @Test func aPublicClientsTokensAreBoundToItsKeyAtUserInfoAndAtRefresh() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, key, _ in
            let app = try await client.registerClient(key: key, isPublic: true, firstParty: true)
            let (email, userId) = try await Flow.signUp(client)
            let phone = DPoPProofMaker.p256(), thief = DPoPProofMaker.p256()
            let (code, verifier) = try await Self.code(client, app, email: email)
            let tokens = try await Self.exchange(client, app, code, verifier, proof: phone.proof(url: Self.tokenURL))
            try #require(tokens.status == .ok, "\(String(decoding: tokens.body, as: UTF8.self))")
            #expect(tokens.value("token_type") == "DPoP")
            let access = try #require(tokens.value("access_token") as String?)
            let refresh = try #require(tokens.value("refresh_token") as String?)
            #expect((jwtPayload(access)["cnf"] as? [String: String])?["jkt"] == phone.thumbprint)

            // UserInfo: with a proof from the key, carrying ath.
            let ok = try await Self.userinfo(client, "DPoP \(access)", proof: phone.proof(method: "GET", url: Self.userinfoURL, accessToken: access))
            #expect(ok.status == .ok && ok.value("sub") == userId)
            // As a bearer token: refused (no downgrade), with the DPoP challenge.
            let bearer = try await Self.userinfo(client, "Bearer \(access)", proof: nil)
            #expect(bearer.status == .unauthorized && bearer.value("error") == "invalid_token")
            #expect(bearer.headers[.wwwAuthenticate]?.hasPrefix("DPoP algs=") == true)
            // Without a proof, with a thief's proof, with a replayed proof, with a proof for another token: refused.
            let none = try await Self.userinfo(client, "DPoP \(access)", proof: nil)
            #expect(none.status == .unauthorized && none.value("error") == "invalid_dpop_proof")
            let stolen = try await Self.userinfo(client, "DPoP \(access)", proof: thief.proof(method: "GET", url: Self.userinfoURL, accessToken: access))
            #expect(stolen.status == .unauthorized && stolen.value("error") == "invalid_dpop_proof")
            #expect(stolen.headers[.wwwAuthenticate]?.contains("error=\"invalid_dpop_proof\"") == true)
            let once = phone.proof(method: "GET", url: Self.userinfoURL, accessToken: access)
            #expect(try await Self.userinfo(client, "DPoP \(access)", proof: once).status == .ok)
            let replayed = try await Self.userinfo(client, "DPoP \(access)", proof: once)
            #expect(replayed.status == .unauthorized && replayed.value("error") == "invalid_dpop_proof")
            let otherToken = try await Self.userinfo(client, "DPoP \(access)", proof: phone.proof(method: "GET", url: Self.userinfoURL, accessToken: "x"))
            #expect(otherToken.status == .unauthorized && otherToken.value("error") == "invalid_dpop_proof")

            // The refresh token is bound too: without the key it is refused and stays unused.
            let bare = try await Self.refresh(client, app, refresh, proof: nil)
            #expect(bare.status == .badRequest && bare.value("error") == "invalid_grant")
            let thiefs = try await Self.refresh(client, app, refresh, proof: thief.proof(url: Self.tokenURL))
            #expect(thiefs.status == .badRequest && thiefs.value("error") == "invalid_grant")
            let rotated = try await Self.refresh(client, app, refresh, proof: phone.proof(url: Self.tokenURL))
            try #require(rotated.status == .ok, "\(String(decoding: rotated.body, as: UTF8.self))")
            #expect(rotated.value("token_type") == "DPoP")
            let next = try #require(rotated.value("access_token") as String?)
            #expect((jwtPayload(next)["cnf"] as? [String: String])?["jkt"] == phone.thumbprint)

            // Introspection says how the token is bound.
            let introspected = try await client.form("/v1/tokens/introspect", "token=\(next)",
                headers: [.contentType: "application/x-www-form-urlencoded", .authorization: "Bearer \(key)"])
            #expect(introspected.any(["active"]) as? Bool == true && introspected.value("token_type") == "DPoP")
            #expect(introspected.value("cnf", "jkt") == phone.thumbprint)
        }
    }

    @Test func aConfidentialClientsRefreshTokensAreNotBoundAndBearerTokensStayBearer() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true)
            let (email, _) = try await Flow.signUp(client)
            let (code, verifier) = try await Self.code(client, app, email: email)
            let tokens = try await Self.exchange(client, app, code, verifier, proof: DPoPProofMaker.p256().proof(url: Self.tokenURL))
            try #require(tokens.status == .ok)
            #expect(tokens.value("token_type") == "DPoP")
            // RFC 9449 §5: a confidential client's refresh token is bound by its authentication, not to a key.
            let plain = try await Self.refresh(client, app, try #require(tokens.value("refresh_token")), proof: nil)
            try #require(plain.status == .ok)
            #expect(plain.value("token_type") == "Bearer")
            let bearer = try #require(plain.value("access_token") as String?)
            #expect(jwtPayload(bearer)["cnf"] == nil)
            #expect(try await Self.userinfo(client, "Bearer \(bearer)", proof: nil).status == .ok)
            // A bearer token sent with the DPoP scheme is refused: it is not bound to any key.
            let wrongScheme = try await Self.userinfo(client, "DPoP \(bearer)",
                proof: DPoPProofMaker.p256().proof(method: "GET", url: Self.userinfoURL, accessToken: bearer))
            #expect(wrongScheme.status == .unauthorized && wrongScheme.value("error") == "invalid_token")
        }
    }

    @Test func dpopJktBindsTheCodeToOneKey() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, key, _ in
            let app = try await client.registerClient(key: key, isPublic: true, firstParty: true)
            let (email, _) = try await Flow.signUp(client)
            let phone = DPoPProofMaker.p256()
            let bound = [("dpop_jkt", phone.thumbprint)]
            let (code, verifier) = try await Self.code(client, app, email: email, extra: bound)
            let other = try await Self.exchange(client, app, code, verifier, proof: DPoPProofMaker.p256().proof(url: Self.tokenURL))
            #expect(other.status == .badRequest && other.value("error") == "invalid_dpop_proof")
            let (code2, verifier2) = try await Self.code(client, app, email: email, extra: bound)
            let none = try await Self.exchange(client, app, code2, verifier2, proof: nil)
            #expect(none.status == .badRequest && none.value("error") == "invalid_dpop_proof")
            let (code3, verifier3) = try await Self.code(client, app, email: email, extra: bound)
            let ok = try await Self.exchange(client, app, code3, verifier3, proof: phone.proof(url: Self.tokenURL))
            #expect(ok.status == .ok && ok.value("token_type") == "DPoP")
            // A malformed dpop_jkt goes back to the redirect URI as invalid_request.
            var browser = OpenIDBrowser(client)
            let page = try await browser.get(app.authorize(extra: [("dpop_jkt", "not-a-thumbprint")]).uri)
            #expect(OpenIDBrowser.query(page.location ?? "")["error"] == "invalid_request")
        }
    }

    @Test func aClientRegisteredForDPoPGetsNoTokenWithoutAProof() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, key, _ in
            let app = try await client.registerClient(key: key, isPublic: true, firstParty: true, dpop: true)
            let listed = try await client.request(.get, "/v1/admin/clients", token: key)
            #expect(String(decoding: listed.body, as: UTF8.self).contains("\"dpopBoundAccessTokens\":true"))
            let (email, _) = try await Flow.signUp(client)
            let (code, verifier) = try await Self.code(client, app, email: email)
            let refused = try await Self.exchange(client, app, code, verifier, proof: nil)
            #expect(refused.status == .badRequest && refused.value("error") == "invalid_dpop_proof")
            // The refusal came before the code was touched: the same code still works with a proof.
            let ok = try await Self.exchange(client, app, code, verifier, proof: DPoPProofMaker.p256().proof(url: Self.tokenURL))
            #expect(ok.status == .ok && ok.value("token_type") == "DPoP")
        }
    }

    /// The proof's jti is recorded in the grant's own transaction: a replayed proof is refused and rolls the grant
    /// back, so the code and the refresh token it came with are still good.
    @Test func aReplayedProofUsesUpNeitherTheCodeNorTheRefreshToken() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, key, _ in
            let app = try await client.registerClient(key: key, isPublic: true, firstParty: true)
            let (email, _) = try await Flow.signUp(client)
            let phone = DPoPProofMaker.p256()
            let (code, verifier) = try await Self.code(client, app, email: email)
            // A proof spent on an exchange that fails (an unknown code): its jti is recorded all the same.
            let spent = phone.proof(url: Self.tokenURL)
            let unknown = try await Self.exchange(client, app, "unknown-code", verifier, proof: spent)
            #expect(unknown.status == .badRequest && unknown.value("error") == "invalid_grant")
            let replayed = try await Self.exchange(client, app, code, verifier, proof: spent)
            #expect(replayed.status == .badRequest && replayed.value("error") == "invalid_dpop_proof", "\(String(decoding: replayed.body, as: UTF8.self))")
            let tokens = try await Self.exchange(client, app, code, verifier, proof: phone.proof(url: Self.tokenURL))
            try #require(tokens.status == .ok, "the code was used up by a refused proof: \(String(decoding: tokens.body, as: UTF8.self))")
            let refresh = try #require(tokens.value("refresh_token") as String?)
            // The same at refresh: the first proof rotates, its replay with the next token is refused and rotates
            // nothing, and the next token still rotates with a fresh proof.
            let first = phone.proof(url: Self.tokenURL)
            let rotated = try await Self.refresh(client, app, refresh, proof: first)
            let next = try #require(rotated.value("refresh_token") as String?, "\(String(decoding: rotated.body, as: UTF8.self))")
            let again = try await Self.refresh(client, app, next, proof: first)
            #expect(again.status == .badRequest && again.value("error") == "invalid_dpop_proof")
            let fresh = try await Self.refresh(client, app, next, proof: phone.proof(url: Self.tokenURL))
            #expect(fresh.status == .ok, "the refresh token was used up by a refused proof: \(String(decoding: fresh.body, as: UTF8.self))")
        }
    }

    @Test func withNoncesOnAProofWithoutOneGetsUseDPoPNonceAndTheCodeSurvives() async throws {
        let configuration = Self.configuration { $0.dpop.requireNonce = true }
        try await TestServer.runWithAdminKey(configuration: configuration) { client, key, _ in
            let app = try await client.registerClient(key: key, isPublic: true, firstParty: true)
            let (email, _) = try await Flow.signUp(client)
            let phone = DPoPProofMaker.p256()
            let (code, verifier) = try await Self.code(client, app, email: email)
            let challenged = try await Self.exchange(client, app, code, verifier, proof: phone.proof(url: Self.tokenURL))
            #expect(challenged.status == .badRequest && challenged.value("error") == "use_dpop_nonce")
            let nonce = try #require(challenged.headers[.init("DPoP-Nonce")!])
            let unknown = try await Self.exchange(client, app, code, verifier, proof: phone.proof(url: Self.tokenURL, nonce: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
            #expect(unknown.status == .badRequest && unknown.value("error") == "use_dpop_nonce")
            let ok = try await Self.exchange(client, app, code, verifier, proof: phone.proof(url: Self.tokenURL, nonce: nonce))
            try #require(ok.status == .ok, "\(String(decoding: ok.body, as: UTF8.self))")
            #expect(ok.headers[.init("DPoP-Nonce")!] != nil)
            // At UserInfo the challenge is a 401 with WWW-Authenticate and the nonce.
            let access = try #require(ok.value("access_token") as String?)
            let resource = try await Self.userinfo(client, "DPoP \(access)", proof: phone.proof(method: "GET", url: Self.userinfoURL, accessToken: access))
            #expect(resource.status == .unauthorized && resource.value("error") == "use_dpop_nonce")
            #expect(resource.headers[.wwwAuthenticate]?.contains("error=\"use_dpop_nonce\"") == true)
            let resourceNonce = try #require(resource.headers[.init("DPoP-Nonce")!])
            let answered = try await Self.userinfo(client, "DPoP \(access)",
                proof: phone.proof(method: "GET", url: Self.userinfoURL, accessToken: access, nonce: resourceNonce))
            #expect(answered.status == .ok)
        }
    }

    @Test func discoveryListsTheProofAlgorithms() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let document = try await client.request(.get, "/.well-known/openid-configuration")
            #expect(document.any(["dpop_signing_alg_values_supported"]) as? [String] == ["ES256", "EdDSA", "PS256", "RS256"])
        }
    }
}
