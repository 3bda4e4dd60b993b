import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import SQLKit
import Testing
import TouchstoneAuth
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneStore
import TouchstoneTesting

/// Several `touchstone serve` processes on one PostgreSQL database: no instance keeps state that changes an answer.
/// Runs when `TOUCHSTONE_TEST_POSTGRES_URL` is set (CI sets it); otherwise a visible line says it is skipped.
@Suite(.enabled(if: TestPostgres.url != nil, "TOUCHSTONE_TEST_POSTGRES_URL is not set"))
struct MultiInstanceTests {
    static var postgresURL: String? { TestPostgres.url }

    static let password = "correct horse battery"

    /// A fresh schema in the test database, dropped afterwards; `body` gets the URL that selects it.
    static func withSchema(_ body: (String) async throws -> Void) async throws {
        let base = try #require(Self.postgresURL)
        let schema = "cli_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let executor = try PostgresExecutor.open(.init(url: base), logger: Logger(label: "admin"))
        try await executor.withDatabase { db in try await db.raw("CREATE SCHEMA \(unsafeRaw: schema)").run() }
        do {
            try await body(base + (base.contains("?") ? "&" : "?") + "schema=\(schema)")
        } catch {
            try? await executor.withDatabase { db in try await db.raw("DROP SCHEMA \(unsafeRaw: schema) CASCADE").run() }
            try await executor.shutdown()
            throw error
        }
        try await executor.withDatabase { db in try await db.raw("DROP SCHEMA \(unsafeRaw: schema) CASCADE").run() }
        try await executor.shutdown()
    }

    @Test func twoInstancesShareEverything() async throws {
        try await Self.withSchema { url in
            // Both start at once and both migrate: the advisory lock makes that safe.
            let (a, b) = try await ServerProcess.pair(database: url)
            defer {
                a.stop()
                b.stop()
            }
            let apiA = TouchstoneClient(baseURL: a.baseURL)
            let apiB = TouchstoneClient(baseURL: b.baseURL)

            // Enable through A with the real SDK.
            let phone = BiometricLogin(
                client: apiA,
                keyStore: SoftwareKeyStore(),
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: InMemoryStateStore()
            )
            let session = try await apiA.createUser(email: "multi@example.com", password: Self.password)
            let registration = try await phone.enable(session: session, deviceName: "phone")
            // B sees the user and the registration at once.
            _ = try await apiB.signIn(email: "multi@example.com", password: Self.password)

            // Login started on A, finished on B.
            let device = TestDeviceKey(.es256)
            let tablet = try await Self.enroll(device, session: session, on: apiA)
            let grant = try await apiA.startAuthentication(registrationId: tablet)
            let signedIn = try await apiB.finishAuthentication(
                registrationId: tablet,
                challenge: grant.challenge,
                signature: device.signature(over: grant.challenge)
            )
            #expect(signedIn.session.methods == ["biometric"])
            // The session issued by B works on A.
            #expect(try await apiA.currentSession(token: signedIn.session.token).user.id == session.user.id)

            // Revocation on B is seen by A immediately.
            try await apiB.deleteRegistration(token: session.session.token, id: registration.id)
            await #expect(throws: BiometricLoginError(.registrationRevoked, "", serverCode: "registration_revoked")) {
                try await phone.login(reason: "after revocation")
            }

            // 50 concurrent finishes of one challenge, spread over both instances: exactly one success.
            let race = try await apiA.startAuthentication(registrationId: tablet)
            let signature = device.signature(over: race.challenge)
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<50 {
                    let api = index.isMultiple(of: 2) ? apiA : apiB
                    group.addTask {
                        do {
                            _ = try await api.finishAuthentication(registrationId: tablet, challenge: race.challenge, signature: signature)
                            return "ok"
                        } catch let error as BiometricLoginError {
                            return error.serverCode ?? error.code.rawValue
                        }
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(outcomes == ["ok": 1, "challenge_not_found": 49])
        }
    }

    /// A sign-in approved on the phone through one instance is seen by a browser polling another (its long poll
    /// re-reads the request), and concurrent polls on both make exactly one session (issue #34).
    @Test func aPhoneApprovalOnOneInstanceSignsInABrowserPollingTheOther() async throws {
        try await Self.withSchema { url in
            let (a, b) = try await ServerProcess.pair(database: url)
            defer {
                a.stop()
                b.stop()
            }
            let apiA = TouchstoneClient(baseURL: a.baseURL)
            let apiB = TouchstoneClient(baseURL: b.baseURL)
            let phone = BiometricLogin(client: apiA, keyStore: SoftwareKeyStore(), verifier: ScriptedVerifier.alwaysApprove(), stateStore: InMemoryStateStore())
            let session = try await apiA.createUser(email: "multi-phone@example.com", password: Self.password)
            try await phone.enable(session: session, deviceName: "phone")
            let started = try await apiB.startSignInRequest(email: "multi-phone@example.com")
            async let waitingOnB = apiB.signInRequestStatus(id: started.requestId, pollToken: started.pollToken, wait: 20)
            async let waitingOnA = apiA.signInRequestStatus(id: started.requestId, pollToken: started.pollToken, wait: 20)
            let request = try #require(try await phone.pendingSignInRequests().first)
            try await phone.approveSignIn(request, choice: started.number)
            let answers = try await [waitingOnB, waitingOnA]
            #expect(answers.allSatisfy { $0.status == "approved" })
            let sessions = answers.compactMap(\.session)
            #expect(sessions.count == 1)
            let token = try #require(sessions.first?.session.token)
            #expect(try await apiB.currentSession(token: token).user.id == session.user.id)
            #expect(try await apiA.signInRequestStatus(id: started.requestId, pollToken: started.pollToken).session == nil)
        }
    }

    /// The limit that protects an account is kept in the database: alternating instances does not get around it.
    @Test func theAccountLimitHoldsAcrossInstances() async throws {
        try await Self.withSchema { url in
            let environment = ["TOUCHSTONE_RATE_LIMITS": "on", "TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT": "3/minute"]
            let (a, b) = try await ServerProcess.pair(database: url, environment: environment)
            defer {
                a.stop()
                b.stop()
            }
            var codes: [String] = []
            for attempt in 0..<5 {
                let api = TouchstoneClient(baseURL: attempt.isMultiple(of: 2) ? a.baseURL : b.baseURL)
                do {
                    _ = try await api.signIn(email: "target@example.com", password: "guess \(attempt)")
                    codes.append("ok")
                } catch let error as BiometricLoginError {
                    codes.append(error.serverCode ?? error.code.rawValue)
                }
            }
            #expect(codes == ["invalid_credentials", "invalid_credentials", "invalid_credentials", "rate_limited", "rate_limited"])
        }
    }

    @Test func aDatabaseOutageAnswers503AndRecoversWithoutRestart() async throws {
        try await Self.withSchema { url in
            var components = try #require(URLComponents(string: url))
            let proxy = TCPProxy(upstreamHost: try #require(components.host), upstreamPort: components.port ?? 5432)
            try await proxy.start()
            components.host = "127.0.0.1"
            components.port = proxy.port
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "acquire_timeout", value: "1")]
            let server = try await ServerProcess(database: try #require(components.string))
            defer { server.stop() }
            // Short request timeouts: a request must never outlive the test's bounded recovery loop.
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 5
            let api = TouchstoneClient(transport: URLSessionTransport(baseURL: server.baseURL, session: URLSession(configuration: configuration)))
            let session = try await api.createUser(email: "outage@example.com", password: Self.password)

            try await proxy.stop()
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "storage_unavailable")) {
                try await api.currentSession(token: session.session.token)
            }
            let ready = try await Self.status(of: server.baseURL.appendingPathComponent("health/ready"))
            #expect(ready == 503)
            #expect(try await Self.status(of: server.baseURL.appendingPathComponent("health/live")) == 200)

            try await proxy.start()
            // The pool reconnects on its own; allow it a bounded number of attempts.
            var recovered = false
            let deadline = Date().addingTimeInterval(30)
            while !recovered && Date() < deadline {
                if (try? await api.currentSession(token: session.session.token)) != nil {
                    recovered = true
                } else {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(recovered, "the server did not recover after the database came back:\n\(server.log)")
            #expect(try await Self.status(of: server.baseURL.appendingPathComponent("health/ready")) == 200)
            // Cut the database off again, connections and all: the instance must still shut down on SIGTERM.
            try await proxy.stop()
            _ = try? await api.currentSession(token: session.session.token)
            #expect(await server.stopAndWait(), "the server did not exit on SIGTERM with its database gone:\n\(server.log)")
        }
    }

    /// A real PostgreSQL stopped for 30 s and started again, with two instances serving throughout: while it is down
    /// every answer is 503, never held for the 30 s of a request timeout; after it starts, both instances serve again;
    /// no answer is ever a 500. No wall-clock bound is asserted beyond "far from the request timeout" (issue #44,
    /// item 6: such bounds failed on a loaded machine): the times are printed (`outage: ...`) for the report, where
    /// docs/security.md and docs/deploy.md quote them.
    @Test func aStoppedDatabaseAnswers503AndBothInstancesRecover() async throws {
        try await PostgresCluster.with(port: 55000 + Int.random(in: 500..<900)) { try await Self.outage(on: $0) }
    }

    static func outage(on cluster: PostgresCluster) async throws {
        let url = cluster.url + "&acquire_timeout=1"
        let (a, b) = try await ServerProcess.pair(database: url)
        defer {
            a.stop()
            b.stop()
        }
        let session = try await TouchstoneClient(baseURL: a.baseURL).createUser(email: "down@example.com", password: Self.password)
        let token = session.session.token

        try await cluster.stop()
        // The first requests find out: within a few acquire timeouts (the first one may also wait out a connection
        // attempt the pool had started; 2.77 s was seen once in CI on a loaded two-core machine), never the 30 s of
        // a request timeout. The limit only tells the two apart.
        let farFromTheRequestTimeout = 15.0
        for server in [a, b] {
            let (status, seconds) = try await Self.timed(server.baseURL, "v1/session", token: token)
            #expect(status == 503)
            #expect(seconds < farFromTheRequestTimeout, "a request took \(seconds) s with the database down")
            let (finish, finishSeconds) = try await Self.timed(
                server.baseURL,
                "v1/biometrics/authentications/finish",
                body: #"{"registrationId":"r","challenge":"c","signature":"AAAA"}"#
            )
            #expect(finish == 503)
            #expect(finishSeconds < farFromTheRequestTimeout, "authentications/finish took \(finishSeconds) s with the database down")
        }
        // Now the breaker is open: 503 at once, and readiness from that state.
        var readiness: [Double] = []
        var fast: [Double] = []
        for server in [a, b] {
            for _ in 0..<5 {
                let (ready, readySeconds) = try await Self.timed(server.baseURL, "health/ready")
                #expect(ready == 503)
                readiness.append(readySeconds)
                let (status, seconds) = try await Self.timed(server.baseURL, "v1/session", token: token)
                #expect(status == 503)
                fast.append(seconds)
            }
        }
        // The server answers these from the breaker's state (about 10-120 ms from the client on a loaded two-core
        // machine; printed below). Their times are reported, not asserted: a median of 0.51 s was seen once in CI
        // while the machine also built and fuzzed.
        #expect(fast.max()! < farFromTheRequestTimeout, "503s answered in \(fast) s")

        // The rest of the 30 s outage under steady traffic: only 503s, each within the acquire timeout.
        let outageEnd = Date().addingTimeInterval(30 - 2)
        var statuses: [Int: Int] = [:]
        var slowest = 0.0
        while Date() < outageEnd {
            for server in [a, b] {
                let (status, seconds) = try await Self.timed(server.baseURL, "v1/session", token: token)
                statuses[status, default: 0] += 1
                slowest = max(slowest, seconds)
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(Set(statuses.keys) == [503], "answers during the outage: \(statuses)")
        #expect(slowest < farFromTheRequestTimeout, "the slowest answer during the outage took \(slowest) s")

        // Back: measured from the moment PostgreSQL accepts connections again.
        try await cluster.start()
        let back = Date()
        var recovered: [Double] = []
        var during: [Int: Int] = [:]
        var served: [Bool] = []
        for server in [a, b] {
            var ok = false
            // Polled with a generous limit: the figure (about a second) is reported, not asserted.
            while !ok && Date().timeIntervalSince(back) < 60 {
                let (status, _) = try await Self.timed(server.baseURL, "v1/session", token: token)
                during[status, default: 0] += 1
                ok = status == 200
                if !ok { try await Task.sleep(for: .milliseconds(50)) }
            }
            served.append(ok)
            recovered.append(Date().timeIntervalSince(back))
        }
        print(
            "outage: readiness median \(Self.median(readiness)) s, 503 median \(Self.median(fast)) s, slowest \(slowest) s, "
                + "answers \(statuses); recovered after \(recovered) s, answers while recovering \(during)"
        )
        #expect(during[500] == nil, "answers while recovering: \(during)")
        #expect(served == [true, true], "the instances did not serve again within a minute (\(recovered) s):\n\(a.log)\n\(b.log)")
        // And they keep serving: a burst on both, no errors.
        for server in [a, b] {
            for _ in 0..<20 {
                #expect(try await Self.timed(server.baseURL, "v1/session", token: token).0 == 200)
            }
            #expect(try await Self.timed(server.baseURL, "health/ready").0 == 200)
        }
    }

    /// Both instances sign with the one key set in the database: a token from either verifies with either's JWKS, a
    /// rotation through one is published by both, and a sign-out through one ends the token at the other's
    /// introspection.
    @Test func tokensOfEitherInstanceVerifyWithEithersKeySet() async throws {
        try await Self.withSchema { url in
            let environment = ["TOUCHSTONE_ISSUER": "https://auth.example.test"]
            let (a, b) = try await ServerProcess.pair(database: url, environment: environment)
            defer {
                a.stop()
                b.stop()
            }
            let session = try await TouchstoneClient(baseURL: a.baseURL).createUser(email: "tokens@example.com", password: Self.password)
            let fromA = try await TouchstoneClient(baseURL: a.baseURL).issueAccessToken(sessionToken: session.session.token).token
            let fromB = try await TouchstoneClient(baseURL: b.baseURL).issueAccessToken(sessionToken: session.session.token).token
            let jwksA = try await Self.get(a.baseURL, "/.well-known/jwks.json")
            let jwksB = try await Self.get(b.baseURL, "/.well-known/jwks.json")
            #expect(try JSONDecoder().decode(PublicJWKSet.self, from: jwksA) == JSONDecoder().decode(PublicJWKSet.self, from: jwksB))
            for jwks in [jwksA, jwksB] {
                let verifier = AccessTokenVerifier(
                    keys: StaticKeySet(try await VerificationKey.keys(fromJWKS: jwks)),
                    issuer: "https://auth.example.test",
                    audiences: ["https://auth.example.test"]
                )
                #expect(try await verifier.verify(fromA).subject == session.user.id)
                #expect(try await verifier.verify(fromB).subject == session.user.id)
            }

            let (created, key, errors) = try await BenchCommandTests.run(["admin", "create-key", "--name", "ops", "--database", url])
            #expect(created == 0, "\(errors)")
            let adminKey = try #require(key.split(separator: "\n").first.map(String.init))
            #expect(try await Self.introspect(b.baseURL, adminKey, fromA)["active"] as? Bool == true)

            // A rotation through A: B reads the key set again within 10 s and publishes the new key too.
            let rotated = try await URLSessionTransport(baseURL: a.baseURL).send(
                TransportRequest(method: "POST", path: "/v1/admin/signing-keys/rotate", headers: ["Authorization": "Bearer \(adminKey)"], body: nil)
            )
            let newKid = try #require((try JSONSerialization.jsonObject(with: rotated.body) as? [String: Any])?["kid"] as? String)
            let deadline = Date().addingTimeInterval(15)
            func publishedByB() async throws -> Bool {
                try JSONDecoder().decode(PublicJWKSet.self, from: try await Self.get(b.baseURL, "/.well-known/jwks.json")).keys.contains { $0.kid == newKid }
            }
            while try await !publishedByB() && Date() < deadline { try await Task.sleep(for: .milliseconds(250)) }
            #expect(try await publishedByB())

            try await TouchstoneClient(baseURL: a.baseURL).signOut(token: session.session.token)
            #expect(try await Self.introspect(b.baseURL, adminKey, fromA).keys.sorted() == ["active"])
        }
    }

    /// One confirmation, eight approvals at once, half through each instance: exactly one succeeds.
    @Test func concurrentApprovalsThroughTwoInstancesGiveExactlyOneSuccess() async throws {
        try await Self.withSchema { url in
            let (a, b) = try await ServerProcess.pair(database: url)
            defer {
                a.stop()
                b.stop()
            }
            let api = TouchstoneClient(baseURL: a.baseURL)
            let session = try await api.createUser(email: "race@example.com", password: Self.password)
            let device = TestDeviceKey(.es256)
            let registrationId = try await Self.enroll(device, session: session, on: api)
            let created = try await ConfirmationCommandTests.post(
                a.baseURL,
                "/v1/confirmations",
                token: session.session.token,
                json: ["summary": "Change the payout account"]
            )
            let id = try #require((created["confirmation"] as? [String: Any])?["id"] as? String)
            let payload = try #require(created["payload"] as? String)
            let signature = device.signed(payload)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    let base = index % 2 == 0 ? a.baseURL : b.baseURL
                    group.addTask {
                        try await URLSessionTransport(baseURL: base).send(
                            TransportRequest(
                                method: "POST",
                                path: "/v1/confirmations/\(id)/approve",
                                headers: ["Content-Type": "application/json"],
                                body: try JSONSerialization.data(withJSONObject: ["registrationId": registrationId, "signature": signature])
                            )
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == 409 }.count == 7, "\(statuses)")
        }
    }

    // MARK: Helpers

    static func get(_ base: URL, _ path: String) async throws -> Data {
        let response = try await URLSessionTransport(baseURL: base).send(TransportRequest(method: "GET", path: path, headers: [:], body: nil))
        try #require(response.status == 200)
        return response.body
    }

    static func introspect(_ base: URL, _ adminKey: String, _ token: String) async throws -> [String: Any] {
        let response = try await URLSessionTransport(baseURL: base).send(
            TransportRequest(
                method: "POST",
                path: "/v1/tokens/introspect",
                headers: ["Authorization": "Bearer \(adminKey)", "Content-Type": "application/x-www-form-urlencoded"],
                body: Data("token=\(token)".utf8)
            )
        )
        return try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
    }

    /// The status of a GET (or a POST of `body`) and how long it took, measured.
    static func timed(_ base: URL, _ path: String, token: String? = nil, body: String? = nil) async throws -> (Int, Double) {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 20
        let transport = URLSessionTransport(baseURL: base, session: URLSession(configuration: configuration))
        let started = Date()
        let response = try await transport.send(
            TransportRequest(method: body == nil ? "GET" : "POST", path: "/" + path, headers: headers, body: body.map { Data($0.utf8) })
        )
        return (response.status, Date().timeIntervalSince(started))
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// Enrols a test key for the session's user through `api`; returns the registration id.
    static func enroll(_ device: TestDeviceKey, session: TouchstoneSession, on api: TouchstoneClient) async throws -> String {
        let grant = try await api.startRegistration(
            token: session.session.token,
            publicKey: DeviceKeyPublicKey(algorithm: device.algorithm, bytes: device.publicKeyBytes(.x963)),
            deviceId: UUID().uuidString,
            deviceName: "tablet"
        )
        return try await api.finishRegistration(
            token: session.session.token,
            registrationId: grant.registrationId,
            signature: device.signature(over: grant.challenge)
        ).id
    }

    static func status(of url: URL) async throws -> Int {
        let response = try await URLSessionTransport(baseURL: url).send(TransportRequest(method: "GET", path: ""))
        return response.status
    }
}

enum TestPostgres {
    static let url: String? = {
        let url = ProcessInfo.processInfo.environment["TOUCHSTONE_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if url == nil {
            print("⚠︎ TOUCHSTONE_TEST_POSTGRES_URL is not set: the multi-instance and database-outage tests are SKIPPED")
        }
        return url
    }()
}

/// A PostgreSQL cluster of its own (scripts/postgres.sh), for a test that stops and starts the server.
struct PostgresCluster {
    let directory: String
    let port: Int
    var url: String { "postgres://touchstone@127.0.0.1:\(self.port)/touchstone?sslmode=disable" }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/postgres.sh").path
    }

    /// Starts a cluster on `port`, runs `body`, then stops and removes the cluster, whether `body` returns or throws.
    static func with(port: Int, _ body: (PostgresCluster) async throws -> Void) async throws {
        let cluster = PostgresCluster(directory: TemporaryFiles.path("pg"), port: port)
        do {
            try await cluster.start()
            try await body(cluster)
        } catch {
            await cluster.remove()
            throw error
        }
        await cluster.remove()
    }

    func start() async throws { try await Self.run(["start", self.directory, String(self.port)]) }
    func stop() async throws { try await Self.run(["stop", self.directory]) }

    func remove() async {
        try? await self.stop()
        TemporaryFiles.remove(self.directory)
    }

    /// Runs the script (off the cooperative pool). It is waited for with `waitpid`, so the server it leaves running
    /// does not keep the wait open.
    private static func run(_ arguments: [String]) async throws {
        let (status, _, errors) = try await ChildProcess.run("/bin/bash", [Self.script] + arguments, timeout: 120)
        guard status == 0 else { throw ProcessError("scripts/postgres.sh \(arguments.joined(separator: " ")) failed (\(status)): \(errors)") }
    }
}
