import ArgumentParser
import Foundation
import Histogram
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneOpenID

/// The OpenID provider under load: complete code flows from signed-in browsers, or refresh-token grants.
struct OpenIDBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "oidc",
        abstract: "Run OpenID Connect code flows (or refresh grants) against a running server; report throughput and latency.",
        discussion: """
            Each simulated browser signs up once (its session token is its browser cookie), then loops on its own \
            keep-alive connection: `flow` is GET /oauth2/authorize (302 with a code) → POST /oauth2/token (code, PKCE \
            verifier, client_secret_basic) → GET /oauth2/userinfo; `refresh` gets a refresh token once, then loops on \
            POST /oauth2/token grant_type=refresh_token, keeping each rotated token. The client must be registered \
            first-party with the redirect URI given (touchstone clients create --first-party).
            """
    )

    enum Mode: String, ExpressibleByArgument, Codable, Sendable {
        case flow
        case refresh
    }

    @Option(name: .long, help: "Server base URL, e.g. http://127.0.0.1:8080 (loopback only).")
    var server: String

    @Option(name: .customLong("client-id"), help: "A first-party confidential client.")
    var clientId: String

    @Option(name: .customLong("client-secret"), help: "Its secret.")
    var clientSecret: String

    @Option(name: .customLong("redirect-uri"), help: "One of its redirect URIs.")
    var redirectURI: String

    @Option(name: .long, help: "flow (authorize, token, userinfo) or refresh (refresh-token grants).")
    var mode: Mode = .flow

    @Option(name: .long, help: "Concurrent simulated browsers.")
    var browsers: Int = 64

    @Option(name: .long, help: "Seconds measured.")
    var duration: Double = 10

    @Option(name: .long, help: "Seconds run before measuring.")
    var warmup: Double = 1

    @Option(name: .customLong("server-pid"), help: "Process id of the server, to report its memory and CPU.")
    var serverPids: [Int32] = []

    @Flag(name: .long, help: "Every token request and UserInfo call carries a DPoP proof (RFC 9449) of the browser's own P-256 key.")
    var dpop = false

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard (1...10_000).contains(self.browsers) else { throw ValidationError("--browsers must be 1...10000") }
        guard self.duration > 0, self.duration <= 3600, self.warmup >= 0, self.warmup <= 600 else {
            throw ValidationError("--duration must be in (0, 3600] and --warmup in [0, 600]")
        }
        _ = try LoopbackEndpoint(self.server)
    }

    func run() async throws {
        let endpoint = try LoopbackEndpoint(self.server)
        let group = MultiThreadedEventLoopGroup.singleton
        let basic = "Basic " + Data("\(FormParameters.encode(self.clientId)):\(FormParameters.encode(self.clientSecret))".utf8).base64EncodedString()
        let runId = String(UUID().uuidString.prefix(8)).lowercased()
        let dpop = self.dpop
        // The browsers: an account and a connection each, eight sign-ups at a time.
        var browsers: [Browser] = []
        for start in stride(from: 0, to: self.browsers, by: 8) {
            try await withThrowingTaskGroup(of: Browser.self) { tasks in
                for index in start..<min(start + 8, self.browsers) {
                    tasks.addTask {
                        let connection = try await HTTPConnection.connect(host: endpoint.host, port: endpoint.port, group: group)
                        let body = try JSONSerialization.data(withJSONObject: [
                            "email": "oidc-bench-\(runId)-\(index)@example.com", "password": "bench password \(index)",
                        ])
                        let response = try await connection.exchange(
                            TransportRequest(method: "POST", path: "/v1/users", headers: ["Content-Type": "application/json"], body: body))
                        guard response.status == 201,
                            let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                            let token = (json["session"] as? [String: Any])?["token"] as? String
                        else {
                            throw ValidationError("sign-up failed with HTTP \(response.status)")
                        }
                        var signer: DPoPProofSigner?
                        if dpop {
                            let keys = SoftwareKeyStore()
                            signer = DPoPProofSigner(store: keys, tag: "bench", publicKey: try await keys.createProofKey(tag: "bench"))
                        }
                        return Browser(connection: connection, cookie: "touchstone_session=\(token)", proofSigner: signer)
                    }
                }
                for try await browser in tasks { browsers.append(browser) }
            }
        }
        let flow = Flow(clientId: self.clientId, redirectURI: self.redirectURI, basic: basic, origin: self.server.hasSuffix("/") ? String(self.server.dropLast()) : self.server)
        if self.mode == .refresh {
            for browser in browsers { browser.refreshToken.withLockedValue { $0 = nil } }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for browser in browsers {
                    tasks.addTask {
                        let tokens = try await flow.codeFlow(browser, scope: "openid offline_access", userinfo: false)
                        browser.refreshToken.withLockedValue { $0 = tokens }
                    }
                }
                try await tasks.waitForAll()
            }
        }
        let clock = ContinuousClock()
        let measureFrom = clock.now + .milliseconds(Int(self.warmup * 1000))
        let end = measureFrom + .milliseconds(Int(self.duration * 1000))
        let sampler = MemorySampler(pids: self.serverPids)
        let probe = Task {
            await SignatureProbe(endpoint: endpoint, group: group).measure(from: measureFrom, until: end, clock: clock)
        }
        let mode = self.mode
        let results = try await withThrowingTaskGroup(of: DeviceResult.self) { tasks in
            for browser in browsers {
                tasks.addTask {
                    var result = DeviceResult()
                    while clock.now < end {
                        let started = clock.now
                        do {
                            switch mode {
                            case .flow:
                                _ = try await flow.codeFlow(browser, scope: "openid email", userinfo: true)
                            case .refresh:
                                try await flow.refresh(browser)
                            }
                            if started >= measureFrom {
                                result.completed += 1
                                let elapsed = started.duration(to: clock.now)
                                result.histogram.record(UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
                            }
                        } catch let failure as FlowFailure {
                            if started >= measureFrom {
                                result.errors[failure.code, default: 0] += 1
                                if failure.status >= 500 { result.serverErrors += 1 }
                            }
                            if mode == .refresh { break }  // the browser's token chain is broken
                        } catch {
                            result.errors["transport", default: 0] += 1
                            break
                        }
                    }
                    return result
                }
            }
            tasks.addTask {
                await sampler.sample(from: measureFrom, until: end, clock: clock)
                return DeviceResult()
            }
            var total = DeviceResult()
            for try await result in tasks { total.merge(result) }
            return total
        }
        for browser in browsers { await browser.connection.close() }
        let histogram = results.histogram
        let cpu = sampler.cpuSeconds()
        let signatureCPU = await probe.value
        let report = Report(
            mode: self.mode.rawValue,
            browsers: self.browsers,
            durationSeconds: self.duration,
            completed: results.completed,
            perSecond: Double(results.completed) / self.duration,
            latencyMs: LoadReport.Latency(microseconds: histogram),
            errors: results.errors,
            serverErrors: results.serverErrors,
            serverMemory: sampler.report(),
            serverCPUMicrosecondsPerOperation: self.serverPids.isEmpty || results.completed == 0
                ? nil : cpu.server.map { $0 * 1_000_000 / Double(results.completed) },
            serverSignatureCPUMicroseconds: signatureCPU
        )
        if self.json {
            try printJSON(report)
        } else {
            let noun = (self.mode == .flow ? "code flows (authorize → token with PKCE → userinfo)" : "refresh-token grants") + (self.dpop ? " with DPoP" : "")
            print("\(noun), \(self.browsers) browsers, \(self.duration) s measured")
            print("  completed     \(report.completed)  (\(Int(report.perSecond)) per second)")
            print(String(format: "  latency ms    p50 %.2f  p90 %.2f  p99 %.2f  max %.2f", report.latencyMs.p50, report.latencyMs.p90,
                report.latencyMs.p99, report.latencyMs.max))
            print("  errors        " + (report.errors.isEmpty ? "none" : report.errors.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")))
        }
    }

    /// What a run measured: `flow` or `refresh` here, `bearer-session` or `dpop-session` for `bench session`.
    struct Report: Codable, Sendable {
        var mode: String
        var browsers: Int
        var durationSeconds: Double
        var completed: Int
        var perSecond: Double
        var latencyMs: LoadReport.Latency
        var errors: [String: Int]
        var serverErrors: Int
        var serverMemory: [LoadReport.ServerMemory]
        var serverCPUMicrosecondsPerOperation: Double?
        /// The mean CPU of the server's own DPoP signature checks in the measured window (a sample of them, read from
        /// `/metrics`), in µs; nil without proofs or without `/metrics` on the server's address.
        var serverSignatureCPUMicroseconds: Double?
    }

    final class Browser: Sendable {
        let connection: HTTPConnection
        let cookie: String
        let refreshToken = NIOLockedValueBox<String?>(nil)
        /// The browser's DPoP key (`--dpop`).
        let proofSigner: DPoPProofSigner?

        init(connection: HTTPConnection, cookie: String, proofSigner: DPoPProofSigner? = nil) {
            self.connection = connection
            self.cookie = cookie
            self.proofSigner = proofSigner
        }

        /// `DPoP: <proof>` for a request, when the browser has a key.
        func proof(_ method: String, _ url: String, accessToken: String? = nil, nonce: String? = nil) async throws -> [String: String] {
            guard let signer = self.proofSigner else { return [:] }
            return ["DPoP": try await signer.proof(method: method, url: url, accessToken: accessToken, nonce: nonce, issuedAt: Date())]
        }
    }

    struct FlowFailure: Error {
        var code: String
        var status: Int
    }

    /// One browser's requests.
    struct Flow: Sendable {
        let clientId: String
        let redirectURI: String
        let basic: String
        /// The server's URL, for `htu`.
        let origin: String

        /// authorize → token (→ userinfo); returns the refresh token, if any.
        func codeFlow(_ browser: Browser, scope: String, userinfo: Bool) async throws -> String? {
            let verifier = Base64.urlEncode((0..<32).map { _ in UInt8.random(in: 0...255) })
            let challenge = PKCE.challenge(of: verifier)
            let query = [
                ("response_type", "code"), ("client_id", self.clientId), ("redirect_uri", self.redirectURI), ("scope", scope),
                ("state", "s"), ("nonce", "n"), ("code_challenge", challenge), ("code_challenge_method", "S256"),
            ].map { "\($0.0)=\(FormParameters.encode($0.1))" }.joined(separator: "&")
            let authorize = try await browser.connection.exchange(
                TransportRequest(method: "GET", path: "/oauth2/authorize?" + query, headers: ["Cookie": browser.cookie]))
            guard authorize.status == 302, let location = authorize.headers.first(name: "Location"),
                let code = URLComponents(string: location)?.queryItems?.first(where: { $0.name == "code" })?.value
            else {
                throw FlowFailure(code: "authorize_\(authorize.status)", status: authorize.status)
            }
            let body = "grant_type=authorization_code&code=\(code)&redirect_uri=\(FormParameters.encode(self.redirectURI))&code_verifier=\(verifier)"
            let tokens = try await self.token(browser, body)
            if userinfo {
                guard let access = tokens["access_token"] as? String else { throw FlowFailure(code: "no_access_token", status: 200) }
                var info = try await self.userinfo(browser, access: access, nonce: nil)
                // As RFC 9449 §8 has clients do: once more with the server's nonce (a server just restarted asks for one).
                if info.status == 401, let nonce = info.headers.first(name: "DPoP-Nonce") {
                    info = try await self.userinfo(browser, access: access, nonce: nonce)
                }
                guard info.status == 200 else { throw FlowFailure(code: "userinfo_\(info.status)", status: info.status) }
            }
            return tokens["refresh_token"] as? String
        }

        private func userinfo(_ browser: Browser, access: String, nonce: String?) async throws -> HTTPConnection.RawResponse {
            var headers = try await browser.proof("GET", self.origin + "/oauth2/userinfo", accessToken: access, nonce: nonce)
            headers["Authorization"] = browser.proofSigner == nil ? "Bearer \(access)" : "DPoP \(access)"
            return try await browser.connection.exchange(TransportRequest(method: "GET", path: "/oauth2/userinfo", headers: headers))
        }

        func refresh(_ browser: Browser) async throws {
            guard let current = browser.refreshToken.withLockedValue({ $0 }) else { throw FlowFailure(code: "no_refresh_token", status: 0) }
            let tokens = try await self.token(browser, "grant_type=refresh_token&refresh_token=\(current)")
            guard let next = tokens["refresh_token"] as? String else { throw FlowFailure(code: "no_refresh_token", status: 200) }
            browser.refreshToken.withLockedValue { $0 = next }
        }

        private func token(_ browser: Browser, _ body: String) async throws -> [String: Any] {
            var headers = try await browser.proof("POST", self.origin + "/oauth2/token")
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Authorization"] = self.basic
            let response = try await browser.connection.exchange(TransportRequest(method: "POST", path: "/oauth2/token", headers: headers, body: Data(body.utf8)))
            let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
            guard response.status == 200 else {
                throw FlowFailure(code: (json["error"] as? String) ?? "token_\(response.status)", status: response.status)
            }
            return json
        }
    }
}
