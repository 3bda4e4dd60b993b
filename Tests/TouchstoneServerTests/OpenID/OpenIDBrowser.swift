import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchstoneOpenID
import TouchstoneTesting

/// A browser for the provider's pages over the test client: it keeps cookies, reads forms out of pages, and stops at
/// redirects (the test decides what to do with them).
struct OpenIDBrowser {
    let client: any TestClientProtocol
    var cookies: [String: String] = [:]

    struct Page {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var html: String

        var location: String? { self.headers[.location] }

        /// The hidden and named inputs of the form with this `action` value (the first form when nil).
        func form(action: String) -> [(String, String)] {
            guard let range = self.html.range(of: "name=\"action\" value=\"\(action)\"") else { return [] }
            let start = self.html[..<range.lowerBound].range(of: "<form", options: .backwards)!.lowerBound
            let end = self.html[range.upperBound...].range(of: "</form>")!.upperBound
            let form = String(self.html[start..<end])
            var fields: [(String, String)] = []
            let pattern = try! NSRegularExpression(pattern: "<input type=\"hidden\" name=\"([^\"]+)\" value=\"([^\"]*)\">")
            for match in pattern.matches(in: form, range: NSRange(form.startIndex..., in: form)) {
                let name = String(form[Range(match.range(at: 1), in: form)!])
                let value = String(form[Range(match.range(at: 2), in: form)!])
                fields.append((name, Self.unescape(value)))
            }
            return fields
        }

        static func unescape(_ text: String) -> String {
            text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    init(_ client: any TestClientProtocol) {
        self.client = client
    }

    mutating func get(_ uri: String) async throws -> Page {
        try await self.send(.get, uri, body: nil)
    }

    mutating func post(_ uri: String, form: [(String, String)]) async throws -> Page {
        let body = form.map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
        return try await self.send(.post, uri, body: body)
    }

    private mutating func send(_ method: HTTPRequest.Method, _ uri: String, body: String?) async throws -> Page {
        var headers: HTTPFields = [:]
        if !self.cookies.isEmpty {
            headers[.cookie] = self.cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")
        }
        if body != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        let response = try await self.client.executeRequest(uri: uri, method: method, headers: headers,
            body: body.map { ByteBuffer(string: $0) })
        for cookie in response.headers[values: .setCookie] {
            let pair = cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || cookie.contains("Max-Age=0") { self.cookies[name] = nil } else { self.cookies[name] = value }
        }
        return Page(status: response.status, headers: response.headers, html: String(buffer: response.body))
    }

    static func encode(_ value: String) -> String { FormParameters.encode(value) }

    /// The query parameters of a redirect's location.
    static func query(_ location: String) -> [String: String] {
        var result: [String: String] = [:]
        for item in URLComponents(string: location)?.queryItems ?? [] { result[item.name] = item.value ?? "" }
        return result
    }
}

/// A registered client and what a test needs to run the flow for it.
struct OpenIDTestClient {
    var id: String
    var secret: String?
    var redirectURI: String

    /// An authorization request URI with a fresh PKCE pair; returns it and the verifier.
    func authorize(
        scope: String = "openid email profile offline_access",
        state: String = "st-\(UUID().uuidString.prefix(6))",
        nonce: String? = "n-1",
        extra: [(String, String)] = []
    ) -> (uri: String, verifier: String, state: String) {
        let verifier = "v" + String(repeating: "x", count: 42) + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", self.id), ("redirect_uri", self.redirectURI), ("scope", scope), ("state", state),
            ("code_challenge", PKCE.challenge(of: verifier)), ("code_challenge_method", "S256"),
        ]
        if let nonce { parameters.append(("nonce", nonce)) }
        parameters += extra
        let query = parameters.map { "\($0.0)=\(OpenIDBrowser.encode($0.1))" }.joined(separator: "&")
        return ("/oauth2/authorize?" + query, verifier, state)
    }

    /// The client's authentication for the token endpoint (Basic for a confidential client).
    var headers: HTTPFields {
        guard let secret else { return [.contentType: "application/x-www-form-urlencoded"] }
        let basic = Data("\(OpenIDBrowser.encode(self.id)):\(OpenIDBrowser.encode(secret))".utf8).base64EncodedString()
        return [.contentType: "application/x-www-form-urlencoded", .authorization: "Basic \(basic)"]
    }

    var publicClientParameter: String { self.secret == nil ? "&client_id=\(self.id)" : "" }
}

extension TestClientProtocol {
    /// A form POST to an OAuth endpoint.
    func form(_ uri: String, _ body: String, headers: HTTPFields) async throws -> JSONTestResponse {
        try await self.request(.post, uri, raw: body, headers: headers)
    }

    /// Registers a client through the admin API.
    func registerClient(
        key: String,
        name: String = "Test app",
        redirectURI: String = "https://app.example.com/cb",
        isPublic: Bool = false,
        firstParty: Bool = false,
        postLogout: [String] = ["https://app.example.com/bye"],
        backchannel: String? = nil,
        ciba: Bool = false,
        dpop: Bool = false
    ) async throws -> OpenIDTestClient {
        var body: [String: any Sendable] = ["name": name, "redirectUris": [redirectURI], "postLogoutRedirectUris": postLogout]
        body["public"] = isPublic
        body["firstParty"] = firstParty
        if let backchannel { body["backchannelLogoutUri"] = backchannel }
        if ciba { body["ciba"] = true }
        if dpop { body["dpopBoundAccessTokens"] = true }
        let created = try await self.request(.post, "/v1/admin/clients", token: key, json: body)
        try #require(created.status == .created, "\(String(decoding: created.body, as: UTF8.self))")
        return OpenIDTestClient(id: try #require(created.value("clientId")), secret: created.value("clientSecret"), redirectURI: redirectURI)
    }
}

/// The payload of a JWT, unverified (the tests check signatures with the JWKS elsewhere).
func jwtPayload(_ token: String) -> [String: Any] {
    let parts = token.split(separator: ".")
    guard parts.count == 3 else { return [:] }
    var base64 = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    guard let data = Data(base64Encoded: base64) else { return [:] }
    return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any]) ?? [:]
}
