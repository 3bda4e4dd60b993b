import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// The real server on a loopback port, the SDK over URLSession with file-backed software keys, SQLite in a file.
struct EndToEndTests {
    @Test func enableLoginDisableThenLoginIsRefused() async throws {
        let configuration = TestServer.configuration()
        let clock = ManualClock()
        try await TestServer.run(.live, configuration: configuration, clock: clock) { client in
            let port = try #require(client.port)
            let directory = URL(fileURLWithPath: TemporaryFiles.path("touchstone-e2e"))
            defer { TemporaryFiles.remove(directory.path) }
            let api = TouchstoneClient(transport: URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:\(port)")!), now: { clock.now })
            let biometrics = BiometricLogin(
                client: api,
                keyStore: try SoftwareKeyStore(directory: directory.appendingPathComponent("keys")),
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: try FileStateStore(directory: directory)
            )

            let passwordSession = try await api.createUser(email: "e2e@example.com", password: "correct horse battery")
            let registration = try await biometrics.enable(session: passwordSession, deviceName: "E2E phone")
            #expect(registration.status == "active")

            let biometricSession = try await biometrics.login(reason: "Sign in")
            #expect(biometricSession.user.email == "e2e@example.com")
            #expect(biometricSession.session.methods == ["biometric"])
            let current = try await api.currentSession(token: biometricSession.session.token)
            #expect(current.user.id == passwordSession.user.id)
            // Bound to the phone's proof key (issue #43): the same token as a bearer token, or from another client
            // (another key, or none), is refused by the real server.
            #expect(await api.isBound(biometricSession))
            let asBearer = try await client.request(.get, "/v1/session", token: biometricSession.session.token)
            #expect(asBearer.status == .unauthorized && asBearer.errorCode == "invalid_dpop_proof")
            let elsewhere = TouchstoneClient(transport: URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:\(port)")!), now: { clock.now })
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "invalid_dpop_proof")) {
                _ = try await elsewhere.currentSession(token: biometricSession.session.token)
            }

            try await biometrics.disable(session: biometricSession)
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await biometrics.login(reason: "Sign in") }

            // The server refuses the old registration too, not just the SDK.
            let start = try await client.request(.post, "/v1/biometrics/authentications/start", json: ["registrationId": registration.id])
            #expect(start.errorCode == "registration_revoked")
            // Everything acknowledged was written to the SQLite file (which the helper removes after the run).
            guard case .sqliteFile(let path) = configuration.database else { return }
            #expect(FileManager.default.fileExists(atPath: path))
        }
        if case .sqliteFile(let path) = configuration.database {
            #expect(!FileManager.default.fileExists(atPath: path), "the test helper removes the database it created")
        }
    }
}
