import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting

/// Every malformed or mismatched DPoP proof is refused with `invalid_dpop_proof` and nothing is issued (issue #43, Bad
/// input): at `POST /v1/session/token` (a token endpoint) and, for the checks that need a token, at UserInfo.
struct DPoPBadProofTests {
    static let url = "https://auth.example.com/v1/session/token"

    static func sessionToken(_ client: any TestClientProtocol) async throws -> String {
        let email = "dpop-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let created = try await client.request(.post, "/v1/users", json: ["email": email, "password": AuthorizationCodeFlowTests.password])
        return try #require(created.value("session", "token"))
    }

    static func issue(_ client: any TestClientProtocol, _ session: String, proofs: [String]) async throws -> JSONTestResponse {
        var headers: HTTPFields = [:]
        for proof in proofs { headers.append(HTTPField(name: .init("DPoP")!, value: proof)) }
        return try await client.request(.post, "/v1/session/token", token: session, headers: headers)
    }

    @Test func eachBrokenProofIsRefusedAndNothingIssued() async throws {
        let configuration = TestServer.configuration { $0.tokens.issuer = "https://auth.example.com" }
        try await TestServer.run(configuration: configuration) { client in
            let session = try await Self.sessionToken(client)
            let key = DPoPProofMaker.p256()
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let hmac = DPoPProofMaker.p256().proof(url: Self.url, header: { $0["alg"] = "HS256" })
            var privateJWK = key.jwk
            privateJWK["d"] = "AAAA"
            let cases: [(String, [String])] = [
                ("wrong typ", [key.proof(url: Self.url, header: { $0["typ"] = "JWT" })]),
                ("alg none", [key.proof(url: Self.url, header: { $0["alg"] = "none" }, signature: { _ in [] })]),
                ("an HMAC alg", [hmac]),
                ("a private key in jwk", [key.proof(url: Self.url, header: { $0["jwk"] = privateJWK })]),
                ("another method", [key.proof(method: "GET", url: Self.url)]),
                ("another path", [key.proof(url: "https://auth.example.com/oauth2/token")]),
                ("a query in htu", [key.proof(url: Self.url + "?x=1")]),
                ("another host", [key.proof(url: "https://evil.example.com/v1/session/token")]),
                ("a stale iat", [key.proof(url: Self.url, iat: now.addingTimeInterval(-61))]),
                ("an iat in the future", [key.proof(url: Self.url, iat: now.addingTimeInterval(30))]),
                ("no jti", [key.proof(url: Self.url, claims: { $0["jti"] = nil })]),
                ("a NUL in jti", [key.proof(url: Self.url, claims: { $0["jti"] = "a\u{0}b" })]),
                ("a control character in jti", [key.proof(url: Self.url, claims: { $0["jti"] = "a\u{1F}b" })]),
                ("a C1 control character in jti", [key.proof(url: Self.url, claims: { $0["jti"] = "a\u{85}b" })]),
                ("a wrong signature", [key.proof(url: Self.url, signature: { $0.map { $0 ^ 1 } })]),
                ("ath without a token", [key.proof(url: Self.url, accessToken: "x")]),
                ("two DPoP headers", [key.proof(url: Self.url), key.proof(url: Self.url)]),
                ("an oversized proof", [key.proof(url: Self.url, claims: { $0["pad"] = String(repeating: "a", count: 9000) })]),
                ("not a JWS", ["a.b"]),
            ]
            for (name, proofs) in cases {
                let response = try await Self.issue(client, session, proofs: proofs)
                #expect(response.status == .badRequest, "\(name): \(response.status)")
                #expect(response.errorCode == "invalid_dpop_proof", "\(name): \(String(decoding: response.body, as: UTF8.self))")
                #expect(response.value("accessToken") == nil, "\(name)")
            }
            // A proof used once is refused the second time.
            let proof = key.proof(url: Self.url)
            let first = try await Self.issue(client, session, proofs: [proof])
            #expect(first.status == .ok && first.value("tokenType") == "DPoP")
            let token = try #require(first.value("accessToken") as String?)
            #expect((jwtPayload(token)["cnf"] as? [String: String])?["jkt"] == key.thumbprint)
            let again = try await Self.issue(client, session, proofs: [proof])
            #expect(again.status == .badRequest && again.errorCode == "invalid_dpop_proof")
            // Without a proof the token is a bearer token, as before.
            let bearer = try await Self.issue(client, session, proofs: [])
            #expect(bearer.status == .ok && bearer.value("tokenType") == "Bearer")
        }
    }

    @Test func aProofAcceptedBeforeARestartIsRefusedAfterIt() async throws {
        // One SQLite file, two servers one after the other: the second keeps no memory of the first's proofs, so one
        // the first could have accepted needs the second's nonce; a proof made after the restart needs none.
        // Outside TestServer's temporary paths, which each run removes at its end.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dpop-replay-\(UUID().uuidString).sqlite").path
        let configuration = TestServer.configuration {
            $0.tokens.issuer = "https://auth.example.com"
            $0.database = .sqliteFile(path: path)
        }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let proof = DPoPProofMaker.p256().proof(url: Self.url, iat: start)
        let session = try await TestServer.run(configuration: configuration, clock: ManualClock(start)) { client in
            // The first server on a new database: no fence, no nonce.
            let session = try await Self.sessionToken(client)
            let issued = try await Self.issue(client, session, proofs: [proof])
            #expect(issued.status == .ok && issued.headers[.init("DPoP-Nonce")!] == nil)
            let replayed = try await Self.issue(client, session, proofs: [proof])
            #expect(replayed.status == .badRequest && replayed.value("error", "message")?.contains("jti") == true)
            return session
        }
        let clock = ManualClock(start.addingTimeInterval(2))
        try await TestServer.run(configuration: configuration, clock: clock) { client in
            let key = DPoPProofMaker.p256()
            let again = try await Self.issue(client, session, proofs: [proof])
            #expect(again.status == .badRequest && again.errorCode == "use_dpop_nonce")
            let nonce = try #require(again.headers[.init("DPoP-Nonce")!])
            // Any proof issued up to the restart plus the skew could be the first server's: the nonce is needed.
            let early = try await Self.issue(client, session, proofs: [key.proof(url: Self.url, iat: start.addingTimeInterval(7))])
            #expect(early.errorCode == "use_dpop_nonce" && early.headers[.init("DPoP-Nonce")!] == nonce)
            let wrongNonce = try await Self.issue(client, session, proofs: [key.proof(url: Self.url, iat: start, nonce: "not-it")])
            #expect(wrongNonce.errorCode == "use_dpop_nonce")
            let withNonce = key.proof(url: Self.url, iat: start, nonce: nonce)
            let accepted = try await Self.issue(client, session, proofs: [withNonce])
            #expect(accepted.status == .ok)
            let replayed = try await Self.issue(client, session, proofs: [withNonce])
            #expect(replayed.errorCode == "invalid_dpop_proof" && replayed.value("error", "message")?.contains("jti") == true)
            // Issued after that and after the first server's mark (its proof's iat and 10 s): accepted without a nonce.
            clock.advance(by: 9)
            let fresh = try await Self.issue(client, session, proofs: [key.proof(url: Self.url, iat: clock.now)])
            #expect(fresh.status == .ok)
            // Once the proofs it guards are stale, the fence is gone and its nonce is no longer sent.
            clock.advance(by: 60)
            let later = try await Self.issue(client, session, proofs: [key.proof(url: Self.url, iat: clock.now)])
            #expect(later.status == .ok && later.headers[.init("DPoP-Nonce")!] == nil)
        }
        for suffix in ["", "-wal", "-shm", ".kek", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test func aProofAcceptedBeforeARestartWithTheClockSetBackIsRefusedAfterIt() async throws {
        // The host's clock is set back a minute between the two servers: the second's start no longer bounds the
        // first's proofs, the mark the first recorded before accepting them does.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dpop-clock-\(UUID().uuidString).sqlite").path
        let configuration = TestServer.configuration {
            $0.tokens.issuer = "https://auth.example.com"
            $0.database = .sqliteFile(path: path)
        }
        defer { for suffix in ["", "-wal", "-shm", ".kek", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let proof = DPoPProofMaker.p256().proof(url: Self.url, iat: start)
        let session = try await TestServer.run(configuration: configuration, clock: ManualClock(start)) { client in
            let session = try await Self.sessionToken(client)
            #expect(try await Self.issue(client, session, proofs: [proof]).status == .ok)
            return session
        }
        let clock = ManualClock(start.addingTimeInterval(-60))
        try await TestServer.run(configuration: configuration, clock: clock) { client in
            // Once this clock reaches the proof's iat it is fresh again, and issued after this start and its skew.
            clock.advance(by: 60)
            let replayed = try await Self.issue(client, session, proofs: [proof])
            #expect(replayed.status == .badRequest && replayed.errorCode == "use_dpop_nonce")
            // Past the mark (the first proof's iat and 10 s), nothing from before can be: no nonce needed.
            clock.advance(by: 11)
            let later = try await Self.issue(client, session, proofs: [DPoPProofMaker.p256().proof(url: Self.url, iat: clock.now)])
            #expect(later.status == .ok, "\(later.body)")
        }
    }

    @Test func aSecondServerOnOneSQLiteFileDoesNotStart() async throws {
        let configuration = TestServer.configuration()
        try await TestServer.run(configuration: configuration) { _ in
            do {
                _ = try await buildApplication(configuration: configuration, dependencies: TestServer.dependencies(clock: ManualClock()))
                Issue.record("a second server started on the same SQLite file")
            } catch {
                #expect("\(error)".contains("another Touchstone server uses this database"))
            }
        }
        // Released with the store: the file serves the next server.
        try await TestServer.run(configuration: configuration) { client in
            let ready = try await client.request(.get, "/health/ready")
            #expect(ready.status == .ok)
        }
    }
}
