import Foundation
import Testing
import TouchstoneTesting
import TouchstoneKit

/// The operator's commands against a real server: admin keys, the audit export, and the soak test.
struct OperatorCommandTests {
    static func get(_ url: URL, path: String, token: String) async throws -> TransportResponse {
        try await URLSessionTransport(baseURL: url).send(
            TransportRequest(method: "GET", path: path, headers: ["Authorization": "Bearer \(token)"])
        )
    }

    @Test func adminKeysAreShownOnceAndWorkUntilRevoked() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let (status, output, errors) = try await BenchCommandTests.run(["admin", "create-key", "--name", "ops", "--database", "sqlite:\(path)"])
        #expect(status == 0, "\(errors)")
        let key = output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("tsa_"))
        #expect(errors.contains("shown only now"))

        let server = try await ServerProcess(database: "sqlite:\(path)")
        defer { server.stop() }
        #expect(try await Self.get(server.baseURL, path: "/v1/admin/users", token: key).status == 200)

        // The list never shows the key, only its id and name.
        let (_, list, _) = try await BenchCommandTests.run(["admin", "list-keys", "--database", "sqlite:\(path)"])
        #expect(list.contains("ops") && !list.contains(key))
        let id = try #require(list.split(separator: " ").first.map(String.init))
        let (revoked, _, _) = try await BenchCommandTests.run(["admin", "revoke-key", id, "--database", "sqlite:\(path)"])
        #expect(revoked == 0)
        #expect(try await Self.get(server.baseURL, path: "/v1/admin/users", token: key).status == 403)
        let (again, _, againErrors) = try await BenchCommandTests.run(["admin", "revoke-key", id, "--database", "sqlite:\(path)"])
        #expect(again != 0)
        #expect(againErrors.contains("no active admin key"))
    }

    @Test func blockedAddressesAreListedAndUnblockedFromTheCLI() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(
            database: "sqlite:\(path)",
            environment: ["TOUCHSTONE_RATE_LIMITS": "on", "TOUCHSTONE_FAILED_LOGINS_PER_ADDRESS": "2/10m"]
        )
        defer { server.stop() }
        let api = TouchstoneClient(baseURL: server.baseURL)
        _ = try await api.createUser(email: "blocked@example.com", password: "correct horse battery")
        func signIn(_ email: String, _ password: String) async -> String {
            do {
                _ = try await api.signIn(email: email, password: password)
                return "ok"
            } catch let error as BiometricLoginError {
                return error.serverCode ?? error.code.rawValue
            } catch {
                return "\(error)"
            }
        }
        #expect(await signIn("a@example.com", "guess") == "invalid_credentials")
        #expect(await signIn("b@example.com", "guess") == "invalid_credentials")
        #expect(await signIn("blocked@example.com", "correct horse battery") == "rate_limited")

        let (listed, list, _) = try await BenchCommandTests.run(["admin", "blocked-addresses", "--database", "sqlite:\(path)"])
        #expect(listed == 0)
        #expect(list.hasPrefix("127.0.0.1  2 failures  blocked until "), "\(list)")
        let (unblocked, message, _) = try await BenchCommandTests.run(["admin", "unblock", "127.0.0.1", "--database", "sqlite:\(path)"])
        #expect(unblocked == 0)
        #expect(message == "unblocked 127.0.0.1\n")
        #expect(await signIn("blocked@example.com", "correct horse battery") == "ok")
        let (again, _, againErrors) = try await BenchCommandTests.run(["admin", "unblock", "127.0.0.1", "--database", "sqlite:\(path)"])
        #expect(again != 0)
        #expect(againErrors.contains("127.0.0.1 is not blocked"))
        let (_, empty, _) = try await BenchCommandTests.run(["admin", "blocked-addresses", "--database", "sqlite:\(path)"])
        #expect(empty.isEmpty)
        let (_, trail, _) = try await BenchCommandTests.run([
            "audit", "export", "--since", "2000-01-01T00:00:00Z", "--type", "address.unblocked", "--database", "sqlite:\(path)",
        ])
        #expect(trail.contains("\"reason\":\"127.0.0.1 by cli\""), "\(trail)")
    }

    @Test func auditExportWritesJSONLines() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        let api = TouchstoneClient(baseURL: server.baseURL)
        let session = try await api.createUser(email: "export@example.com", password: "correct horse battery")
        _ = try? await api.signIn(email: "export@example.com", password: "wrong password")
        _ = try await api.signIn(email: "export@example.com", password: "correct horse battery")
        #expect(await server.stopAndWait())

        let (status, output, errors) = try await BenchCommandTests.run([
            "audit", "export", "--since", "2000-01-01T00:00:00Z", "--database", "sqlite:\(path)",
        ])
        #expect(status == 0, "\(errors)")
        let events = try output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        // Oldest first: the server's first signing key (made at start), then the user's events.
        #expect(events.map { "\($0["type"] ?? "")/\($0["outcome"] ?? "")" } == [
            "signing_key.created/info", "user.created/success", "password_login/failure", "password_login/success",
        ])
        let userEvents = events.dropFirst()
        #expect(userEvents.allSatisfy { $0["userId"] as? String == session.user.id })
        #expect(userEvents.allSatisfy { $0["clientAddress"] as? String == "127.0.0.1" })
        #expect(!output.contains("correct horse battery") && !output.contains(session.session.token))
        #expect(errors.contains("exported 4 events"))

        // Filters, and a file.
        let file = TemporaryFiles.path("audit", suffix: ".jsonl")
        defer { TemporaryFiles.remove(file) }
        let (filtered, _, _) = try await BenchCommandTests.run([
            "audit", "export", "--type", "password_login", "--output", file, "--database", "sqlite:\(path)",
        ])
        #expect(filtered == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").count == 2)
        let (future, futureOutput, _) = try await BenchCommandTests.run([
            "audit", "export", "--since", "2999-01-01T00:00:00Z", "--database", "sqlite:\(path)",
        ])
        #expect(future == 0 && futureOutput.isEmpty)
        let (bad, _, badErrors) = try await BenchCommandTests.run(["audit", "export", "--since", "last week", "--database", "sqlite:\(path)"])
        #expect(bad != 0)
        #expect(badErrors.contains("RFC 3339"))
    }

    @Test func loadtestReportsAndPassesOnAHealthyServer() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let origin = "http://localhost:8443"
        let server = try await ServerProcess(database: "sqlite:\(path)", extraArguments: ["--origin", origin])
        defer { server.stop() }
        let (status, output, errors) = try await BenchCommandTests.run([
            "loadtest", "--server", server.baseURL.absoluteString, "--devices", "4", "--duration", "1", "--origin", origin, "--json",
        ])
        #expect(status == 0, "\(errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(report["kind"] as? String == "mixed")
        #expect((report["ceremonies"] as? Int ?? 0) > 0)
        // Every ceremony of a device-key device a confirmation: all of them are counted as such.
        let (confirmStatus, confirmOutput, confirmErrors) = try await BenchCommandTests.run([
            "loadtest", "--server", server.baseURL.absoluteString, "--devices", "2", "--duration", "2", "--kind", "biometric",
            "--confirm-every", "1", "--json",
        ])
        #expect(confirmStatus == 0, "\(confirmErrors)")
        let confirmReport = try #require(try JSONSerialization.jsonObject(with: Data(confirmOutput.utf8)) as? [String: Any])
        #expect((confirmReport["confirmations"] as? Int ?? 0) > 0)
        #expect(confirmReport["confirmations"] as? Int == confirmReport["ceremonies"] as? Int)
        #expect((confirmReport["errors"] as? [String: Int]) == [:])
        #expect(report["serverErrors"] as? Int == 0)
        #expect((report["errors"] as? [String: Int]) == [:])
    }

    @Test func loadtestFailsWhenTheServerGoesAway() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        let url = server.baseURL.absoluteString
        // Kill the server shortly after the devices are enrolled: the run must fail, not report success. The kill runs
        // on a thread of its own, so its timing does not depend on how busy the test process's cooperative pool is.
        let pid = server.process.processIdentifier
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 1.5)
            kill(pid, SIGKILL)
        }
        let (status, _, errors) = try await BenchCommandTests.run(["loadtest", "--server", url, "--devices", "2", "--duration", "4", "--kind", "biometric"])
        #expect(status != 0)
        #expect(errors.contains("FAILED") || errors.contains("Error"), "\(errors)")
    }

    @Test func loadtestRefusesNonLoopbackServers() async throws {
        let (status, _, errors) = try await BenchCommandTests.run(["loadtest", "--server", "http://example.com:8080"])
        #expect(status != 0)
        #expect(errors.contains("loopback"))
    }
}
