import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchstoneAuth
import TouchstoneTesting

/// TouchstoneAuth with DPoP-bound tokens (issue #43): a token from Touchstone bound to a key is accepted only with a
/// proof from that key, for this request, once; never as a bearer token.
struct DPoPResourceServerTests {
    typealias Servers = ResourceServerTests

    static func call(_ api: any TestClientProtocol, _ path: String, _ authorization: String, proof: String?) async throws
        -> Servers.Answer
    {
        var headers: HTTPFields = [.authorization: authorization]
        if let proof { headers[.init("DPoP")!] = proof }
        let response = try await api.executeRequest(uri: path, method: .get, headers: headers, body: nil)
        return Servers.Answer(status: response.status, body: String(buffer: response.body), challenge: response.headers[.wwwAuthenticate])
    }

    @Test func aBoundTokenNeedsAProofFromItsKeyAndIsNeverABearerToken() async throws {
        try await Servers.withServers { touchstone, _, api, clock in
            let (session, _) = try await Servers.signUp(touchstone, "dpop-rs@example.com")
            let phone = DPoPProofMaker.p256()
            let issued = try await touchstone.request(.post, "/v1/session/token", token: session,
                headers: [.init("DPoP")!: phone.proof(url: Servers.issuer + "/v1/session/token", iat: clock.now)])
            #expect(issued.value("tokenType") == "DPoP")
            let token = try #require(issued.value("accessToken") as String?)
            let url = Servers.audience + "/key"

            let ok = try await Self.call(api, "/key", "DPoP \(token)", proof: phone.proof(method: "GET", url: url, iat: clock.now, accessToken: token))
            #expect(ok.status == .ok && ok.body == phone.thumbprint)

            let bearer = try await Self.call(api, "/key", "Bearer \(token)", proof: nil)
            #expect(bearer.status == .unauthorized && bearer.code == "invalid_token")
            #expect(bearer.challenge?.hasPrefix("DPoP algs=\"ES256 EdDSA PS256 RS256\"") == true)

            let proof = phone.proof(method: "GET", url: url, iat: clock.now, accessToken: token)
            #expect(try await Self.call(api, "/key", "DPoP \(token)", proof: proof).status == .ok)
            let cases: [(String, String?)] = [
                ("a replayed proof", proof),
                ("no proof", nil),
                ("another key", DPoPProofMaker.p256().proof(method: "GET", url: url, iat: clock.now, accessToken: token)),
                ("another path", phone.proof(method: "GET", url: Servers.audience + "/me", iat: clock.now, accessToken: token)),
                ("another token's ath", phone.proof(method: "GET", url: url, iat: clock.now, accessToken: "other")),
                ("a stale proof", phone.proof(method: "GET", url: url, iat: clock.now.addingTimeInterval(-120), accessToken: token)),
            ]
            for (name, candidate) in cases {
                let answer = try await Self.call(api, "/key", "DPoP \(token)", proof: candidate)
                #expect(answer.status == .unauthorized, "\(name)")
                #expect(answer.code == "invalid_dpop_proof", "\(name): \(answer.body)")
                #expect(answer.challenge?.contains("error=\"invalid_dpop_proof\"") == true, "\(name)")
            }
        }
    }

    @Test func aReplayCacheThatCannotAnswerIs503NotAPass() async throws {
        try await Servers.withServers { touchstone, _, api, clock in
            let (session, _) = try await Servers.signUp(touchstone, "dpop-cache@example.com")
            let phone = DPoPProofMaker.p256()
            let issued = try await touchstone.request(.post, "/v1/session/token", token: session,
                headers: [.init("DPoP")!: phone.proof(url: Servers.issuer + "/v1/session/token", iat: clock.now)])
            let token = try #require(issued.value("accessToken") as String?)
            let answer = try await Self.call(api, "/cache-down", "DPoP \(token)",
                proof: phone.proof(method: "GET", url: Servers.audience + "/cache-down", iat: clock.now, accessToken: token))
            #expect(answer.status == .serviceUnavailable && answer.code == "temporarily_unavailable", "\(answer.body)")
            #expect(answer.challenge == nil)
        }
    }

    @Test func anAPICanRefuseBearerTokens() async throws {
        try await Servers.withServers { touchstone, _, api, clock in
            let (session, _) = try await Servers.signUp(touchstone, "dpop-only@example.com")
            let bearer = try await Servers.accessToken(touchstone, session)
            #expect(try await Self.call(api, "/key", "Bearer \(bearer)", proof: nil).body == "bearer")
            let refused = try await Self.call(api, "/bound-only", "Bearer \(bearer)", proof: nil)
            #expect(refused.status == .unauthorized && refused.code == "invalid_token")
            // A bearer token sent as DPoP is not bound to anything: refused too.
            let phone = DPoPProofMaker.p256()
            let dressed = try await Self.call(api, "/key", "DPoP \(bearer)",
                proof: phone.proof(method: "GET", url: Servers.audience + "/key", iat: clock.now, accessToken: bearer))
            #expect(dressed.status == .unauthorized && dressed.code == "invalid_token")
        }
    }
}
