import Foundation
import Logging
import SQLKit
import Testing
import TouchstoneTesting
import TouchstoneStore

/// `touchstone bench login` and `bench seed` against a real server: they must measure real ceremonies. (Numbers are
/// reported, never asserted: a benchmark does not gate CI.)
struct BenchCommandTests {
    /// Runs the binary; returns the exit code, standard output and standard error. Blocking reads run off the pool.
    static func run(_ arguments: [String]) async throws -> (Int32, String, String) {
        try await ChildProcess.run(try ServerProcess.binary.path, arguments)
    }

    /// A throwaway database path; the caller removes it (``TemporaryFiles/remove(_:)``) in `defer`.
    static func temporaryDatabase() -> String {
        TemporaryFiles.path("touchstone-bench", suffix: ".sqlite")
    }

    @Test(arguments: ["biometric", "passkey"])
    func loginBenchRunsCompleteCeremonies(kind: String) async throws {
        let path = Self.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        // The server listens on a port it picks, so the passkey origin is set explicitly on both sides.
        let origin = "http://localhost:8443"
        let server = try await ServerProcess(database: "sqlite:\(path)", extraArguments: ["--origin", origin])
        defer { server.stop() }
        let (status, output, errors) = try await Self.run([
            "bench", "login", "--server", server.baseURL.absoluteString, "--kind", kind, "--devices", "3",
            // Each device's first ceremony counts however slow the machine is (the window is extended for it).
            "--duration", "1", "--warmup", "0.2", "--min-ceremonies", "1", "--server-pid", String(server.process.processIdentifier), "--json",
            "--origin", origin,
        ])
        #expect(status == 0, "\(errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(report["kind"] as? String == kind)
        #expect(report["devices"] as? Int == 3)
        let ceremonies = try #require(report["ceremonies"] as? Int)
        #expect(ceremonies >= 3)
        #expect((report["errors"] as? [String: Int]) == [:])
        let latency = try #require(report["latencyMs"] as? [String: Double])
        #expect((latency["p50"] ?? 0) > 0)
        #expect((latency["p50"] ?? 0) <= (latency["p99"] ?? 0))
        #expect((latency["p99"] ?? 0) <= (latency["max"] ?? 0))
        let memory = try #require((report["serverMemory"] as? [[String: Any]])?.first)
        #expect((memory["peakRSSMiB"] as? Double ?? 0) > 1)
        // Each ceremony made a session the server stored: the server's log shows no failure.
        #expect(!server.log.contains("error"), "\(server.log)")
    }

    /// `bench session`: bound calls report what the server's own signature checks cost (from `/metrics`), bearer
    /// calls make none.
    @Test(arguments: [true, false])
    func sessionBenchReportsTheServersSignatureChecks(dpop: Bool) async throws {
        let path = Self.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        defer { server.stop() }
        let (status, output, errors) = try await Self.run([
            "bench", "session", "--server", server.baseURL.absoluteString, "--phones", "2", "--duration", "3", "--warmup", "0.2",
            "--server-pid", String(server.process.processIdentifier), "--json",
        ] + (dpop ? ["--dpop"] : []))
        #expect(status == 0, "\(errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(report["mode"] as? String == (dpop ? "dpop-session" : "bearer-session"))
        // Even a slow machine makes far more than the 16 calls of which the server times one.
        #expect((report["completed"] as? Int ?? 0) > 16)
        #expect((report["errors"] as? [String: Int]) == [:])
        let check = report["serverSignatureCPUMicroseconds"] as? Double
        if dpop {
            #expect((check ?? 0) > 0, "\(report)")
        } else {
            #expect(check == nil)
        }
    }

    @Test func loginBenchStopsWhenDevicesCannotEnrol() async throws {
        // Passkeys from an origin the server does not allow: enrolment fails, and the bench says why.
        let path = Self.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        defer { server.stop() }
        let (status, _, errors) = try await Self.run([
            "bench", "login", "--server", server.baseURL.absoluteString, "--kind", "passkey", "--devices", "1",
            "--duration", "0.5", "--origin", "https://evil.example",
        ])
        #expect(status != 0)
        #expect(errors.contains("origin"), "\(errors)")
    }

    @Test func loginBenchOnlyLoadsLoopback() async throws {
        let (status, _, errors) = try await Self.run(["bench", "login", "--server", "http://192.0.2.1:8080", "--duration", "1"])
        #expect(status != 0)
        #expect(errors.contains("loopback"), "\(errors)")
    }

    @Test func seedAddsActiveRegistrationsAServerCanUse() async throws {
        let path = Self.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let (status, output, errors) = try await Self.run(["bench", "seed", "--database", "sqlite:\(path)", "--registrations", "250"])
        #expect(status == 0, "\(errors)")
        #expect(output.contains("added 250"))
        let executor = try await SQLiteExecutor.open(.file(path: path), logger: Logger(label: "test"))
        let counts = try await executor.withDatabase { db in
            try await db.raw(
                "SELECT (SELECT COUNT(*) FROM users) AS users, (SELECT COUNT(*) FROM registrations WHERE status = 'active') AS active"
            ).first().map { row in (try row.decode(column: "users", as: Int.self), try row.decode(column: "active", as: Int.self)) }
        }
        try await executor.shutdown()
        #expect(counts?.0 == 250)
        #expect(counts?.1 == 250)
        // The server starts on the seeded database and serves ceremonies next to the seeded rows.
        let server = try await ServerProcess(database: "sqlite:\(path)")
        defer { server.stop() }
        let (benchStatus, benchOutput, benchErrors) = try await Self.run([
            "bench", "login", "--server", server.baseURL.absoluteString, "--devices", "2", "--duration", "0.5", "--min-ceremonies", "1", "--json",
        ])
        #expect(benchStatus == 0, "\(benchErrors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(benchOutput.utf8)) as? [String: Any])
        #expect((report["ceremonies"] as? Int ?? 0) >= 2)
    }

    /// Every statement of a sign-in is an index lookup (docs/performance.md shows the same plans on 100,000 rows).
    @Test func signInStatementsNeverScanATable() async throws {
        let path = Self.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let (status, _, errors) = try await Self.run(["bench", "seed", "--database", "sqlite:\(path)", "--registrations", "50"])
        #expect(status == 0, "\(errors)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/query_plans.py").path
        let (planStatus, text, _) = try await ChildProcess.run("/usr/bin/env", ["python3", script, path])
        #expect(planStatus == 0, "\(text)")
        #expect(text.contains("0 table scan(s)"), "\(text)")
        // One index search per table a statement reads (the finishes' joined reads: three each, a biometric and a
        // passkey sign-in's; the biometric start's read of the registration; the recording
        // INSERT … SELECT of a biometric finish whose signature was checked first: the registration and user of its
        // condition, the user of its two RETURNING subqueries; a wrong signature's recording INSERT … SELECT: the
        // registration), none for the INSERTs of values (a passkey's answered challenge, audit event, rate-limit and
        // address-failure upserts), which have no plan lines.
        #expect(text.components(separatedBy: "SEARCH ").count - 1 == 22, "\(text)")
    }
}
