import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TouchstoneKit
import TouchstoneTesting

/// Traces of a real `touchstone serve`, exported over OTLP/HTTP (JSON) to a receiver in the test.
struct TracingTests {
    /// What the receiver got: the spans of every export request, flattened.
    final class Received: Sendable {
        struct Span: Sendable {
            var traceId: String
            var spanId: String
            var parentSpanId: String
            var name: String
            var attributes: [String: String]
        }
        let spans = NIOLockedValueBox<[Span]>([])
        let bodies = NIOLockedValueBox<[String]>([])

        /// OTLP/JSON encodes ids as hex (the specification) or, from a protobuf JSON mapper, base64: both are read.
        static func hex(_ text: String?) -> String {
            guard let text, !text.isEmpty else { return "" }
            if text.count % 2 == 0, text.allSatisfy(\.isHexDigit) { return text.lowercased() }
            guard let data = Data(base64Encoded: text) else { return text }
            return data.map { String(format: "%02x", $0) }.joined()
        }

        func add(_ body: Data) {
            self.bodies.withLockedValue { $0.append(String(decoding: body, as: UTF8.self)) }
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return }
            var found: [Span] = []
            for resource in object["resourceSpans"] as? [[String: Any]] ?? [] {
                for scope in resource["scopeSpans"] as? [[String: Any]] ?? [] {
                    for span in scope["spans"] as? [[String: Any]] ?? [] {
                        var attributes: [String: String] = [:]
                        for attribute in span["attributes"] as? [[String: Any]] ?? [] {
                            guard let key = attribute["key"] as? String, let value = attribute["value"] as? [String: Any] else { continue }
                            attributes[key] = value.values.first.map { "\($0)" } ?? ""
                        }
                        found.append(
                            Span(
                                traceId: Self.hex(span["traceId"] as? String),
                                spanId: Self.hex(span["spanId"] as? String),
                                parentSpanId: Self.hex(span["parentSpanId"] as? String),
                                name: span["name"] as? String ?? "",
                                attributes: attributes
                            )
                        )
                    }
                }
            }
            self.spans.withLockedValue { $0 += found }
        }
    }

    static func request(_ base: URL, _ method: String, _ path: String, json: [String: Any], headers: [String: String] = [:]) async throws
        -> TransportResponse
    {
        var all = headers
        all["Content-Type"] = "application/json"
        return try await URLSessionTransport(baseURL: base).send(
            TransportRequest(method: method, path: path, headers: all, body: try JSONSerialization.data(withJSONObject: json))
        )
    }

    @Test func aRequestsSpansReachAnOTLPCollectorUnderTheCallersTrace() async throws {
        let received = Received()
        let router = Router()
        router.post("/v1/traces") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 16 * 1024 * 1024)
            received.add(Data(body.readableBytesView))
            return .ok
        }
        let collector = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await collector.test(.live) { client in
            let collectorPort = try #require(client.port)
            let path = BenchCommandTests.temporaryDatabase()
            defer { TemporaryFiles.remove(path) }
            let server = try await ServerProcess(
                database: "sqlite:\(path)",
                environment: [
                    "TOUCHSTONE_OTLP_ENDPOINT": "http://127.0.0.1:\(collectorPort)",
                    "TOUCHSTONE_OTLP_PROTOCOL": "http/json",
                    "OTEL_BSP_SCHEDULE_DELAY": "100",
                    "TOUCHSTONE_LOG_FORMAT": "json",
                ]
            )
            defer { server.stop() }
            let email = "traced-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "correct horse battery"
            let created = try await Self.request(server.baseURL, "POST", "/v1/users", json: ["email": email, "password": password])
            #expect(created.status == 201)
            // The caller's trace: W3C traceparent with a sampled parent span.
            let traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
            let parentId = "00f067aa0ba902b7"
            let signIn = try await Self.request(
                server.baseURL, "POST", "/v1/sessions", json: ["email": email, "password": password],
                headers: ["traceparent": "00-\(traceId)-\(parentId)-01"]
            )
            #expect(signIn.status == 200)
            let token = (try JSONSerialization.jsonObject(with: signIn.body) as? [String: Any]).flatMap { ($0["session"] as? [String: Any])?["token"] as? String }

            var spans: [Received.Span] = []
            for _ in 0..<150 {
                spans = received.spans.withLockedValue { $0 }.filter { $0.traceId == traceId }
                if spans.contains(where: { $0.name == "password.verify" }) && spans.contains(where: { $0.name.hasPrefix("POST ") }) { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let serverSpan = try #require(spans.first { $0.name == "POST /v1/sessions" }, "spans: \(spans.map(\.name))")
            #expect(serverSpan.parentSpanId == parentId)
            #expect(serverSpan.attributes["http.route"] == "/v1/sessions")
            #expect(serverSpan.attributes["http.response.status_code"] == "200")
            // The ceremony's steps are its children: the password check and the store operations.
            let children = spans.filter { $0.parentSpanId == serverSpan.spanId }
            #expect(children.contains { $0.name == "password.verify" })
            #expect(children.contains { $0.name.hasPrefix("db.") && $0.attributes["db.system"] == "sqlite" })
            // Nothing secret or personal in what was exported.
            let exported = received.bodies.withLockedValue { $0 }.joined()
            for secret in [password, email, token ?? "no token"] {
                #expect(!exported.contains(secret), "\(secret) was exported")
            }
            // The request's log line carries the trace id.
            let line = server.log.split(separator: "\n").first { $0.contains("\"route\":\"/v1/sessions\"") && $0.contains(traceId) }
            #expect(line != nil, "no log line of the traced request with its trace id")
        }
    }
}
