import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Testing
import TouchstoneTesting
import TouchstoneKit
import TouchstoneStore

/// SIGKILL in the middle of a stream of sign-ups, enrolments and logins from several devices: after a restart on the
/// same database, everything the server acknowledged is there and works, and nothing is half-written.
struct CrashSafetyTests {
    static let password = "correct horse battery"

    /// What the server acknowledged before it died.
    struct Acknowledged: Sendable {
        var users: [String] = []
        var devices: [(registrationId: String, keyStore: SoftwareKeyStore, state: InMemoryStateStore)] = []
        /// Sessions of biometric sign-ins, with their phone's keys and state: they are bound to its proof key.
        var sessions: [(session: TouchstoneSession, keyStore: SoftwareKeyStore, state: InMemoryStateStore)] = []
        var logins = 0
    }

    static var databases: [String] {
        var list = ["sqlite"]
        if TestPostgres.url != nil { list.append("postgres") }
        return list
    }

    @Test(arguments: databases)
    func acknowledgedWritesSurviveSIGKILL(engine: String) async throws {
        if engine == "postgres" {
            try await MultiInstanceTests.withSchema { url in try await Self.run(database: url, sqlitePath: nil) }
        } else {
            let path = TemporaryFiles.path("crash", suffix: ".sqlite")
            defer { TemporaryFiles.remove(path) }
            try await Self.run(database: "sqlite:\(path)", sqlitePath: path)
        }
    }

    static func run(database: String, sqlitePath: String?) async throws {
        let server = try await ServerProcess(database: database)
        let api = TouchstoneClient(baseURL: server.baseURL)
        let acknowledged = NIOLockedValueBox(Acknowledged())

        // Four devices, each looping: sign up, enable biometrics (SDK), sign in with them. Each step that returns
        // is acknowledged; the first failure (the server is gone) ends the device.
        let devices = Task {
            await withTaskGroup(of: Void.self) { group in
                for device in 0..<4 {
                    group.addTask {
                        var iteration = 0
                        while !Task.isCancelled {
                            iteration += 1
                            do {
                                let email = "crash-\(device)-\(iteration)@example.com"
                                let session = try await api.createUser(email: email, password: Self.password)
                                acknowledged.withLockedValue { $0.users.append(email) }
                                let keyStore = SoftwareKeyStore()
                                let state = InMemoryStateStore()
                                let phone = BiometricLogin(
                                    client: api,
                                    keyStore: keyStore,
                                    verifier: ScriptedVerifier.alwaysApprove(),
                                    stateStore: state
                                )
                                let registration = try await phone.enable(session: session)
                                acknowledged.withLockedValue { $0.devices.append((registration.id, keyStore, state)) }
                                for _ in 0..<3 {
                                    let signedIn = try await phone.login(reason: "crash test")
                                    acknowledged.withLockedValue {
                                        $0.sessions.append((signedIn, keyStore, state))
                                        $0.logins += 1
                                    }
                                }
                            } catch {
                                return
                            }
                        }
                    }
                }
            }
        }

        // Kill once the stream is well under way (a count, not a time: the machine's speed does not matter).
        while acknowledged.withLockedValue({ $0.logins }) < 24 {
            guard server.process.isRunning else { throw ProcessError("the server exited early:\n\(server.log)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(server.process.processIdentifier, SIGKILL)
        await devices.value
        _ = await server.stopAndWait()

        let before = acknowledged.withLockedValue { $0 }
        #expect(before.logins >= 24)

        // Restart on the same database: everything acknowledged is there and works.
        let restarted = try await ServerProcess(database: database)
        let newApi = TouchstoneClient(baseURL: restarted.baseURL)
        for email in before.users {
            _ = try await newApi.signIn(email: email, password: Self.password)
        }
        for kept in before.sessions {
            // The app's next launch: its phone binds the kept session to the proof key again.
            let phone = BiometricLogin(client: newApi, keyStore: kept.keyStore, verifier: ScriptedVerifier.alwaysApprove(), stateStore: kept.state)
            try await phone.resume(kept.session)
            let session = try await newApi.currentSession(token: kept.session.session.token)
            #expect(session.session.methods == ["biometric"])
        }
        for device in before.devices {
            let phone = BiometricLogin(
                client: newApi,
                keyStore: device.keyStore,
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: device.state
            )
            let signedIn = try await phone.login(reason: "after the crash")
            #expect(signedIn.session.methods == ["biometric"])
        }
        #expect(await restarted.stopAndWait())

        // Nothing half-written: the database is consistent and every acknowledged login has its audit event.
        let logger = Logger(label: "crash-test")
        let executor: any SQLExecutor = try await {
            if let sqlitePath { return try await SQLiteExecutor.open(.file(path: sqlitePath), logger: logger) }
            return try PostgresExecutor.open(.init(url: database), logger: logger)
        }()
        try await executor.withDatabase { db in
            if sqlitePath != nil {
                let integrity = try await db.raw("PRAGMA integrity_check").all()
                #expect(try integrity.map { try $0.decode(column: "integrity_check", as: String.self) } == ["ok"])
                #expect(try await db.raw("PRAGMA foreign_key_check").all().isEmpty)
            }
            let orphans = try await db.raw(
                """
                SELECT token_hash FROM sessions WHERE registration_id IS NOT NULL
                    AND registration_id NOT IN (SELECT id FROM registrations WHERE status <> 'pending')
                """
            ).all()
            #expect(orphans.isEmpty, "sessions of registrations that were never activated")
            let duplicateActive = try await db.raw(
                "SELECT device_id FROM registrations WHERE status = 'active' GROUP BY device_id HAVING COUNT(*) > 1"
            ).all()
            #expect(duplicateActive.isEmpty)
            let events = try await db.raw(
                "SELECT COUNT(*) AS n FROM audit_events WHERE type = 'biometric_login' AND outcome = 'success'"
            ).first()?.decode(column: "n", as: Int.self) ?? 0
            // The logins before the crash, plus one per device after it.
            #expect(events >= before.logins + before.devices.count)
        }
        try await executor.shutdown()
    }
}
