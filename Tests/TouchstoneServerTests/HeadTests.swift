import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchstoneTesting

/// Issue #44 item 5: HEAD on every GET route answers as GET does — the same status and headers, `Content-Length`
/// included — with no body (RFC 9110 §9.3.2); the OpenAPI document has a HEAD operation for every GET operation.
/// Over a real socket (`.live`), so a body sent after a HEAD answer would be read as the next answer and fail the test.
struct HeadTests {
    /// Headers that differ between any two answers, and the ones only a body's own content decides.
    static let volatile: Set<HTTPField.Name> = [.date, .setCookie, HTTPField.Name("traceparent")!, HTTPField.Name("X-Request-Id")!]

    @Test(.timeLimit(.minutes(2))) func everyGetOperationAnswersHeadLikeGet() async throws {
        try await TestServer.run(.live) { client in
            let signUp = try await client.request(.post, "/v1/users", json: ["email": "head@example.com", "password": Flow.password])
            let token = try #require(signUp.value("session", "token"))
            let document = try await client.request(.get, "/openapi.json").json
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let gets = paths.filter { $0.value["get"] != nil }.keys.sorted()
            #expect(gets.count > 30)
            for template in gets {
                // Parameters get a value no record has: the answer is then a 404 or 400, still an answer to compare.
                let path = template.replacingOccurrences(of: #"\{[^}]+\}"#, with: "unknown-id", options: .regularExpression)
                let get = try await client.request(.get, path, token: token)
                let head = try await client.request(.head, path, token: token)
                #expect(head.status == get.status, "HEAD \(path): \(head.status), GET \(get.status)")
                #expect(head.body.isEmpty, "HEAD \(path) sent a body")
                let names = { (fields: HTTPFields) in Set(fields.map(\.name)).subtracting(Self.volatile) }
                #expect(names(head.headers) == names(get.headers), "HEAD \(path)'s header names differ from GET's")
                #expect(head.headers[.contentType] == get.headers[.contentType], "HEAD \(path)")
                if let length = get.headers[.contentLength], get.status != .ok || Self.stable.contains(template) {
                    #expect(head.headers[.contentLength] == length, "HEAD \(path): Content-Length")
                    #expect(Int(length) == get.body.count, "GET \(path): Content-Length")
                }
            }
        }
    }

    /// GET answers whose length does not change between two calls (others carry fresh tokens or times).
    static let stable: Set<String> = ["/health", "/health/live", "/openapi.json", "/.well-known/jwks.json", "/v1/config", "/v1/passkeys"]

    /// An error to a HEAD request is the GET's error without its body: status, `WWW-Authenticate`, `Content-Length`.
    @Test(.timeLimit(.minutes(1))) func errorsToHeadHaveNoBody() async throws {
        try await TestServer.run(.live) { client in
            let get = try await client.request(.get, "/v1/session")
            let head = try await client.request(.head, "/v1/session")
            #expect(get.status == .unauthorized)
            #expect(head.status == .unauthorized)
            #expect(head.body.isEmpty)
            #expect(head.headers[.contentLength] == get.headers[.contentLength])
            #expect(head.headers[.wwwAuthenticate] == get.headers[.wwwAuthenticate])
            let unknown = try await client.request(.head, "/nope")
            #expect(unknown.status == .notFound)
            #expect(unknown.body.isEmpty)
            // HEAD where only POST is routed: 405 with Allow, no body; a GET path lists HEAD among its methods.
            let post = try await client.request(.head, "/v1/users")
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers[.allow] == "POST")
            #expect(post.body.isEmpty)
            let trace = try await client.request(HTTPRequest.Method("TRACE")!, "/health")
            #expect(trace.headers[.allow] == "GET, HEAD")
        }
    }

    /// The document: a HEAD operation beside each GET one (scripts/openapi_head.py writes them), with the GET's
    /// statuses and no response content, and no HEAD without a GET.
    @Test func theDocumentHasAHeadOperationForEveryGet() async throws {
        try await TestServer.run { client in
            let document = try await client.request(.get, "/openapi.json").json
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            for (path, item) in paths {
                let get = item["get"] as? [String: Any]
                let head = item["head"] as? [String: Any]
                #expect((get == nil) == (head == nil), "\(path): GET and HEAD do not go together")
                guard let get, let head else { continue }
                #expect(head["operationId"] as? String == (get["operationId"] as? String).map { $0 + "Head" }, "\(path)")
                let getResponses = try #require(get["responses"] as? [String: Any])
                let headResponses = try #require(head["responses"] as? [String: [String: Any]])
                #expect(Set(getResponses.keys) == Set(headResponses.keys), "\(path)")
                #expect(headResponses.values.allSatisfy { $0["content"] == nil }, "HEAD \(path) declares a body")
            }
        }
    }
}
