import Foundation
import Testing
import TouchstoneOpenID

/// The authorization request's rules (issue #31, §3), without a server.
struct AuthorizationRequestTests {
    static let challenge = PKCE.challenge(of: String(repeating: "v", count: 43))
    static let base = "response_type=code&client_id=app&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb&scope=openid+email"
        + "&state=xyz&code_challenge=\(challenge)&code_challenge_method=S256"

    static func request(_ query: String) throws(OpenIDError) -> AuthorizationRequest {
        try AuthorizationRequest(try FormParameters(urlEncoded: query), clientId: "app", redirectURI: "https://app.example.com/cb")
    }

    @Test func aValidRequestIsRead() throws {
        let request = try Self.request(Self.base + "&nonce=n&prompt=login+consent&max_age=300&acr_values=phrh+phr&login_hint=a%40b.c")
        #expect(request.scopes == ["openid", "email"] && request.isOpenID)
        #expect(request.state == "xyz" && request.nonce == "n" && request.codeChallenge == Self.challenge)
        #expect(request.prompt == [.login, .consent])
        #expect(request.maxAge == 300)
        #expect(request.requiredACR == .phr)  // phr accepted: any passkey will do
        #expect(request.loginHint == "a@b.c")
        #expect(try Self.request(Self.base + "&acr_values=phrh").requiredACR == .phrh)
        #expect(try Self.request(Self.base + "&acr_values=urn%3Aother").requiredACR == nil)
        #expect(try Self.request(Self.base + "&unknown=ignored&response_mode=query").prompt.isEmpty)
    }

    @Test func theTargetComesFirstAndIsNeverRedirected() throws {
        let target = AuthorizationRequest.target(of: try FormParameters(urlEncoded: Self.base))
        #expect(try target.get() == ("app", "https://app.example.com/cb"))
        for query in ["redirect_uri=x", "client_id=a", "client_id=a&client_id=a&redirect_uri=x", "client_id=a&redirect_uri=x&redirect_uri=y"] {
            guard case .failure(let error) = AuthorizationRequest.target(of: try FormParameters(urlEncoded: query)) else {
                Issue.record("accepted \(query)")
                continue
            }
            #expect(error.code == "invalid_request")
        }
    }

    @Test(arguments: [
        ("&code_challenge_method=plain", "code_challenge_method=S256", "invalid_request"),
        ("", "code_challenge_method=S256", "invalid_request"),  // removed below: no PKCE
        ("&code_challenge=short", "code_challenge=\(challenge)", "invalid_request"),
        ("&response_type=token", "response_type=code", "unsupported_response_type"),
        ("&scope=openid+payments", "scope=openid+email", "invalid_scope"),
        ("&prompt=none+login", "", "invalid_request"),
        ("&prompt=never", "", "invalid_request"),
        ("&max_age=1.5", "", "invalid_request"),
        ("&max_age=99999999999", "", "invalid_request"),
        ("&response_mode=form_post", "", "invalid_request"),
        ("&request=e30", "", "request_not_supported"),
        ("&request_uri=urn%3Ax", "", "request_uri_not_supported"),
        ("&state=again", "", "invalid_request"),
    ])
    func badParametersAreTheRightError(add: String, remove: String, code: String) {
        var query = Self.base
        if !remove.isEmpty {
            query = query.hasPrefix(remove + "&") ? String(query.dropFirst(remove.count + 1)) : query.replacingOccurrences(of: "&" + remove, with: "")
        }
        if add.isEmpty { query = query.replacingOccurrences(of: "&code_challenge=\(Self.challenge)", with: "") }
        query += add
        do {
            _ = try Self.request(query)
            Issue.record("accepted \(query)")
        } catch {
            #expect(error.code == code, "\(query): \(error)")
        }
    }

    @Test func acrClasses() {
        #expect(ACR.phr.isMet(by: "phr") && ACR.phr.isMet(by: "phrh") && !ACR.phr.isMet(by: nil))
        #expect(ACR.phrh.isMet(by: "phrh") && !ACR.phrh.isMet(by: "phr"))
    }

    @Test func theDiscoveryDocumentListsWhatTheIssueAsks() {
        let metadata = ProviderMetadata(issuer: "https://id.example.com", signingAlgorithms: ["ES256"])
        #expect(metadata.authorization_endpoint == "https://id.example.com/oauth2/authorize")
        #expect(metadata.jwks_uri == "https://id.example.com/.well-known/jwks.json")
        #expect(Set(metadata.scopes_supported).isSuperset(of: ["openid", "email", "profile", "offline_access"]))
        #expect(metadata.code_challenge_methods_supported == ["S256"] && metadata.response_modes_supported == ["query"])
        #expect(metadata.prompt_values_supported == ["none", "login", "consent", "select_account", "create"])
        #expect(ProviderMetadata(issuer: "https://id.example.com/", signingAlgorithms: []).token_endpoint == "https://id.example.com/oauth2/token")
    }
}
