import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `GET /metrics`, request ids and JSON logs.
struct MetricsTests {
    /// One sample of the exposition text: `name{label="value",...} number`.
    struct Sample: Hashable {
        var name: String
        var labels: [String: String]
    }

    /// Parses the Prometheus text format as far as the tests read it (no escapes in label values are produced).
    static func parse(_ text: String) -> [Sample: Double] {
        var samples: [Sample: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            var labels: [String: String] = [:]
            var name = String(series)
            if let brace = series.firstIndex(of: "{") {
                name = String(series[..<brace])
                let inner = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                for pair in inner.split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
                }
            }
            samples[Sample(name: name, labels: labels)] = value
        }
        return samples
    }

    static func scrape(_ client: any TestClientProtocol) async throws -> (text: String, samples: [Sample: Double]) {
        let response = try await client.request(.get, "/metrics")
        try #require(response.status == .ok)
        #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = String(decoding: response.body, as: UTF8.self)
        return (text, Self.parse(text))
    }

    static func value(_ samples: [Sample: Double], _ name: String, _ labels: [String: String] = [:]) -> Double {
        samples[Sample(name: name, labels: labels)] ?? 0
    }

    @Test func aScriptedRunMovesTheCountersByExactlyWhatWasDone() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let before = try await Self.scrape(client).samples
            // Two password sign-ins, one wrong password.
            _ = try await flow.signIn(account.email)
            let token = try await flow.signIn(account.email)
            let wrong = try await client.request(.post, "/v1/sessions", json: ["email": account.email, "password": "not the password"])
            #expect(wrong.status == .unauthorized)
            // One enrolment, three biometric sign-ins of which one fails.
            let device = TestDeviceKey(.es256)
            let registration = try await flow.enroll(token, device)
            #expect(try await flow.login(registration, device).status == .ok)
            #expect(try await flow.login(registration, device).status == .ok)
            let challenge = try await flow.challenge(registration)
            let bad = try await flow.finishLogin(registration, challenge: challenge, signature: TestDeviceKey(.es256).signed(challenge))
            #expect(bad.errorCode == "invalid_signature")
            // An access token and two introspections.
            let issued = try await client.request(.post, "/v1/session/token", token: token)
            #expect(issued.status == .ok)

            let after = try await Self.scrape(client).samples
            func delta(_ name: String, _ labels: [String: String] = [:]) -> Double {
                Self.value(after, name, labels) - Self.value(before, name, labels)
            }
            let ceremonies = "touchstone_ceremonies_total"
            #expect(delta(ceremonies, ["kind": "password", "outcome": "success", "code": ""]) == 2)
            #expect(delta(ceremonies, ["kind": "password", "outcome": "failure", "code": "invalid_credentials"]) == 1)
            #expect(delta(ceremonies, ["kind": "biometric_enrolment", "outcome": "success", "code": ""]) == 1)
            #expect(delta(ceremonies, ["kind": "biometric", "outcome": "success", "code": ""]) == 2)
            #expect(delta(ceremonies, ["kind": "biometric", "outcome": "failure", "code": "invalid_signature"]) == 1)
            #expect(delta("touchstone_ceremonies_started_total", ["kind": "biometric_enrolment"]) == 1)
            #expect(delta("touchstone_ceremonies_started_total", ["kind": "biometric"]) == 3)
            #expect(delta("touchstone_access_tokens_issued_total") == 1)
            #expect(delta("touchstone_audit_events_total", ["type": "biometric_login", "outcome": "failure"]) == 1)
            // HTTP: by route template, never by the path's values.
            let finish = ["method": "POST", "route": "/v1/biometrics/authentications/finish"]
            #expect(delta("touchstone_http_requests_total", finish.merging(["status": "200"]) { $1 }) == 2)
            #expect(delta("touchstone_http_requests_total", finish.merging(["status": "401"]) { $1 }) == 1)
            #expect(delta("touchstone_http_request_duration_seconds_count", finish) == 3)
            // The scrape before this one counted too; the one now is counted after it is answered.
            #expect(delta("touchstone_http_requests_total", ["method": "GET", "route": "/metrics", "status": "200"]) == 1)
            // The store and the process.
            #expect(Self.value(after, "touchstone_db_up") == 1)
            #expect(Self.value(after, "touchstone_db_operation_duration_seconds_count", ["engine": "sqlite", "kind": "write", "outcome": "ok"]) > 0)
            #expect(Self.value(after, "touchstone_sqlite_commit_batch_size_count") > 0)
            #expect(Self.value(after, "touchstone_sqlite_commit_duration_seconds_count") > 0)
            #expect(Self.value(after, "touchstone_process_resident_memory_bytes") > 1_000_000)
            #expect(Self.value(after, "touchstone_process_open_fds") > 0)
            #expect(Self.value(after, "touchstone_build_info", ["version": TouchstoneBuild.version]) == 1)
        }
    }

    @Test func lockoutsPinDisablesAndRateLimitsAreCounted() async throws {
        let configuration = TestServer.configuration { $0.rateLimits.enabled = true }
        try await TestServer.run(configuration: configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let registration = try await flow.enroll(account.token, device)
            // Three wrong PINs disable the PIN.
            #expect(try await flow.setPin(account.token, registration, "482913").status == .ok)
            for _ in 0..<3 { _ = try await flow.pinLogin(registration, "000000") }
            // Five wrong signatures lock the registration (the default threshold).
            for _ in 0..<5 {
                let challenge = try await flow.challenge(registration)
                _ = try await flow.finishLogin(registration, challenge: challenge, signature: TestDeviceKey(.es256).signed(challenge))
            }
            // Past the per-account limit on one registration's challenges.
            var limited = 0
            for _ in 0..<40 where limited == 0 {
                if try await flow.startLogin(registration).status == .tooManyRequests { limited += 1 }
            }
            #expect(limited == 1)
            let samples = try await Self.scrape(client).samples
            #expect(Self.value(samples, "touchstone_lockouts_total", ["kind": "registration"]) == 1)
            #expect(Self.value(samples, "touchstone_pin_disabled_total") == 1)
            #expect(Self.value(samples, "touchstone_rate_limited_total", ["scope": "account"]) == 1)
        }
    }

    @Test func metricsCarryNoUserData() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let registration = try await flow.enroll(account.token, device)
            _ = try await flow.login(registration, device)
            _ = try await client.request(.get, "/v1/admin/users/\(account.userId)")
            let text = try await Self.scrape(client).text
            for secret in [account.email, account.userId, registration, account.token, Flow.password, "127.0.0.1"] {
                #expect(!text.contains(secret), "\(secret) appears in /metrics")
            }
            #expect(text.contains("route=\"/v1/admin/users/{id}\""))
        }
    }

    @Test func everyResponseCarriesARequestId() async throws {
        let configuration = TestServer.configuration { $0.rateLimits.trustedProxies = ["127.0.0.1"] }
        try await TestServer.run(.live, configuration: configuration) { client in
            let plain = try await client.request(.get, "/health")
            let id = try #require(plain.headers[HTTPField.Name("X-Request-Id")!])
            #expect(id.count == 24 && id.allSatisfy(\.isHexDigit))
            let error = try await client.request(.get, "/no/such/route")
            #expect(error.headers[HTTPField.Name("X-Request-Id")!] != nil)
            // From a trusted proxy (the test client connects from 127.0.0.1), the proxy's id is kept...
            let proxied = try await client.request(.get, "/health", headers: [HTTPField.Name("X-Request-Id")!: "lb-7f3a"])
            #expect(proxied.headers[HTTPField.Name("X-Request-Id")!] == "lb-7f3a")
            // ... unless it is not a short printable token.
            let hostile = try await client.request(.get, "/health", headers: [HTTPField.Name("X-Request-Id")!: "a\"b"])
            #expect(hostile.headers[HTTPField.Name("X-Request-Id")!] != "a\"b")
        }
        try await TestServer.run(.live) { client in
            // From anyone else it is replaced.
            let sent = try await client.request(.get, "/health", headers: [HTTPField.Name("X-Request-Id")!: "chosen-by-client"])
            #expect(sent.headers[HTTPField.Name("X-Request-Id")!] != "chosen-by-client")
        }
    }

    /// Lines written by the JSON log handler of one application.
    final class Lines: Sendable {
        let lines = NIOLockedValueBox<[String]>([])
        func append(_ bytes: [UInt8]) { self.lines.withLockedValue { $0.append(String(decoding: bytes, as: UTF8.self)) } }
        var all: [String] { self.lines.withLockedValue { $0 } }
    }

    @Test func jsonLogsHaveOneObjectPerLineWithTheRequestFields() async throws {
        let lines = Lines()
        var logger = Logger(label: "touchstone") { JSONLogHandler(label: $0, write: { lines.append($0) }) }
        logger.logLevel = .trace
        let clock = ManualClock()
        var dependencies = TestServer.dependencies(clock: clock)
        dependencies.logger = logger
        var configuration = TestServer.configuration()
        configuration.logLevel = .trace
        defer { TestServer.removeDatabase(of: configuration) }
        let app = try await buildApplication(configuration: configuration, dependencies: dependencies)
        let (requestId, email) = try await app.test(.router) { client in
            let account = try await Flow(client: client).signUp()
            let response = try await client.request(.get, "/v1/session", token: account.token)
            return (try #require(response.headers[HTTPField.Name("X-Request-Id")!]), account.email)
        }
        let objects = try lines.all.map { line -> [String: Any] in
            #expect(line.hasSuffix("\n") && line.dropLast().firstIndex(of: "\n") == nil)
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let request = try #require(objects.first { $0["request_id"] as? String == requestId && $0["message"] as? String == "request" })
        #expect(request["route"] as? String == "/v1/session")
        #expect(request["method"] as? String == "GET")
        #expect(request["status"] as? String == "200")
        #expect(request["level"] as? String == "info")
        #expect((request["duration_ms"] as? String).flatMap(Double.init) != nil)
        #expect((request["time"] as? String).flatMap(Date.init(rfc3339:)) != nil)
        // At trace level, with the drivers' statements kept out: no password, no token.
        let all = lines.all.joined()
        #expect(!all.contains(Flow.password))
    }

    /// An event's error is written in both formats, under the same keys.
    @Test func logEventsKeepTheirError() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "disk on fire" } }
        let (json, text) = (Lines(), Lines())
        let handlers: [any LogHandler] = [
            JSONLogHandler(label: "touchstone", write: { json.append($0) }), TextLogHandler(label: "touchstone", write: { text.append($0) }),
        ]
        for handler in handlers {
            handler.log(
                event: LogEvent(
                    level: .error, message: "failed", error: Broken(), metadata: ["a": "1"], source: "S", file: #fileID,
                    function: #function, line: #line
                )
            )
        }
        let jsonLine = try #require(json.all.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(jsonLine.utf8)) as? [String: Any])
        #expect(object["error.message"] as? String == "disk on fire")
        #expect((object["error.type"] as? String)?.hasSuffix("Broken") == true)
        #expect(object["a"] as? String == "1" && object["message"] as? String == "failed")
        let line = try #require(text.all.first)
        #expect(line.contains("error.message=disk on fire") && line.contains("Broken"))
    }

    /// A text stream for swift-log's own handler.
    final class TextLines: TextOutputStream, @unchecked Sendable {
        let lines = NIOLockedValueBox<[String]>([])
        func write(_ string: String) { self.lines.withLockedValue { $0.append(string) } }
    }

    @Test func textLogsAreSwiftLogsLinesWithTheRequestFields() async throws {
        // The same line as swift-log's StreamLogHandler for the same event, but the time (it may tick in between).
        let ours = Lines()
        let theirs = TextLines()
        var handlers: [any LogHandler] = [TextLogHandler(label: "touchstone", write: { ours.append($0) }), StreamLogHandler(label: "touchstone", stream: theirs)]
        for index in handlers.indices {
            handlers[index][metadataKey: "request_id"] = "r1"
            handlers[index][metadataKey: "b"] = .array(["x", "y"])
            handlers[index].log(
                event: LogEvent(
                    level: .warning, message: "request", metadata: ["a": "1", "request_id": "r2"], source: "TouchstoneServer",
                    file: #fileID, function: #function, line: #line
                )
            )
            handlers[index].log(
                event: LogEvent(level: .info, message: "plain", metadata: nil, source: "S", file: #fileID, function: #function, line: #line)
            )
        }
        func withoutTime(_ line: String) -> Substring { line.drop { $0 != " " } }
        #expect(ours.all.map(withoutTime) == theirs.lines.withLockedValue { $0 }.map(withoutTime))
        #expect(ours.all.first.map { String(withoutTime($0)) } == #" warning touchstone: a=1 b=["x", "y"] request_id=r2 [TouchstoneServer] request"# + "\n")
        #expect(ours.all.allSatisfy { $0.prefix { $0 != " " }.count == "2026-11-24T12:00:00+0000".count })

        // Through the server: the access line names the request's id.
        let lines = Lines()
        var logger = Logger(label: "touchstone") { TextLogHandler(label: $0, write: { lines.append($0) }) }
        logger.logLevel = .info
        var dependencies = TestServer.dependencies(clock: ManualClock())
        dependencies.logger = logger
        var configuration = TestServer.configuration()
        configuration.logLevel = .info
        defer { TestServer.removeDatabase(of: configuration) }
        let app = try await buildApplication(configuration: configuration, dependencies: dependencies)
        let requestId = try await app.test(.router) { client in
            let response = try await client.request(.get, "/health/live")
            return try #require(response.headers[HTTPField.Name("X-Request-Id")!])
        }
        #expect(lines.all.contains { $0.contains("request_id=\(requestId)") && $0.contains("route=/health/live") && $0.hasSuffix("] request\n") }, "\(lines.all)")
    }

    @Test func metricsCanHaveAListenerOfTheirOwn() async throws {
        let port = try Self.freePort()
        let configuration = TestServer.configuration { $0.metricsAddress = MetricsAddress(host: "127.0.0.1", port: port) }
        try await TestServer.run(.live, configuration: configuration) { client in
            // Not on the main port...
            #expect(try await client.request(.get, "/metrics").status == .notFound)
            // ... but on its own, once the listener is up (polled with a generous limit: under the whole suite's load
            // the listener has taken more than 5 s to answer; CI failed on that once, 2026-11-28).
            var text = ""
            for _ in 0..<1200 {
                if let (data, response) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!),
                    (response as? HTTPURLResponse)?.statusCode == 200
                {
                    text = String(decoding: data, as: UTF8.self)
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(text.contains("touchstone_build_info"))
        }
    }

    static func freePort() throws -> Int {
        let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(socket, raw, length) == 0, getsockname(socket, raw, &length) == 0 else { throw CocoaError(.fileWriteUnknown) }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The metric names a PromQL text uses, histogram series reduced to their family.
    static func metricNames(in text: String) -> Set<String> {
        let pattern = try! Regex("touchstone_[a-z0-9_]+")
        return Set(text.matches(of: pattern).map { match in
            var name = String(text[match.range])
            for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix(suffix) {
                let family = String(name.dropLast(suffix.count))
                if ServerMetrics.catalogue.contains(where: { $0.name == family && $0.type == "histogram" }) { name = family }
            }
            return name
        })
    }

    @Test func theCatalogueDescribesEveryExposedMetricAndTheDocsUseOnlyThose() async throws {
        let catalogue = Set(ServerMetrics.catalogue.map(\.name))
        #expect(catalogue.count == ServerMetrics.catalogue.count)
        let configuration = TestServer.configuration { $0.rateLimits.enabled = true }
        try await TestServer.run(configuration: configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let registration = try await flow.enroll(account.token, device)
            _ = try await flow.login(registration, device)
            _ = try await client.request(.post, "/v1/session/token", token: account.token)
            let text = try await Self.scrape(client).text
            let lines = text.split(separator: "\n")
            // Every family has HELP and TYPE lines, and is in the catalogue with that type.
            for line in lines where line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                let name = String(parts[2])
                let entry = ServerMetrics.catalogue.first { $0.name == name }
                #expect(entry?.type == String(parts[3]), "\(name) is exposed as \(parts[3]) but catalogued as \(entry?.type ?? "nothing")")
                #expect(lines.contains { $0.hasPrefix("# HELP \(name) ") }, "\(name) has no HELP line")
            }
        }
        // docs/operations.md lists every metric; the dashboard and the alert rules use no other.
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        for name in catalogue { #expect(guide.contains("`\(name)`"), "docs/operations.md does not list \(name)") }
        let dashboard = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.root.appendingPathComponent("docs/grafana/touchstone-dashboard.json")))
        let panels = try #require((dashboard as? [String: Any])?["panels"] as? [[String: Any]])
        let queries = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(queries.count >= 12)
        let rules = try String(contentsOf: Self.root.appendingPathComponent("docs/prometheus/touchstone-rules.yml"), encoding: .utf8)
        for text in queries + [rules] {
            let unknown = Self.metricNames(in: text).subtracting(catalogue)
            #expect(unknown.isEmpty, "unknown metrics \(unknown) in \(text.prefix(120))")
        }
        #expect(Self.metricNames(in: queries.joined(separator: " ")).count >= 15)
    }

    @Test func configurationReadsObservabilitySettings() throws {
        let configuration = try TouchstoneConfiguration(environment: ["TOUCHSTONE_LOG_FORMAT": "json", "TOUCHSTONE_METRICS_ADDRESS": "[::1]:9464"])
        #expect(configuration.logFormat == .json)
        #expect(configuration.metricsAddress == MetricsAddress(host: "::1", port: 9464))
        #expect(TouchstoneConfiguration().logFormat == .text)
        #expect(TouchstoneConfiguration().metricsAddress == nil)
        let traced = try TouchstoneConfiguration(environment: [
            "TOUCHSTONE_OTLP_ENDPOINT": "http://otel-collector:4318", "TOUCHSTONE_OTLP_PROTOCOL": "http/json",
            "TOUCHSTONE_TRACE_SAMPLE_RATIO": "0.25",
        ])
        #expect(traced.tracing.enabled && traced.tracing.otlpEndpoint == "http://otel-collector:4318")
        #expect(traced.tracing.protocolName == "http/json" && traced.tracing.sampleRatio == 0.25)
        #expect(!TouchstoneConfiguration().tracing.enabled)
        for bad in [
            ["TOUCHSTONE_LOG_FORMAT": "xml"], ["TOUCHSTONE_METRICS_ADDRESS": "9464"], ["TOUCHSTONE_METRICS_ADDRESS": "host:99999"],
            ["TOUCHSTONE_OTLP_ENDPOINT": "otel-collector:4318"], ["TOUCHSTONE_OTLP_ENDPOINT": "ftp://collector"],
            ["TOUCHSTONE_OTLP_PROTOCOL": "grpc"], ["TOUCHSTONE_TRACE_SAMPLE_RATIO": "1.5"], ["TOUCHSTONE_TRACE_SAMPLE_RATIO": "half"],
        ] {
            #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: bad) }
        }
    }
}
