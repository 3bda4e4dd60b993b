import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import SQLKit
import Testing
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
            async let startA = ServerProcess(database: url)
            async let startB = ServerProcess(database: url)
            let (a, b) = try await (startA, startB)
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

    /// The limit that protects an account is kept in the database: alternating instances does not get around it.
    @Test func theAccountLimitHoldsAcrossInstances() async throws {
        try await Self.withSchema { url in
            let environment = ["TOUCHSTONE_RATE_LIMITS": "on", "TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT": "3/minute"]
            async let startA = ServerProcess(database: url, environment: environment)
            async let startB = ServerProcess(database: url, environment: environment)
            let (a, b) = try await (startA, startB)
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

    // MARK: Helpers

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
