// The store operations of a biometric sign-in on the embedded SQLite store (a file, WAL, synchronous = FULL, group
// commit): the start's read, the finish's read and write, and the session lookup every authenticated call makes.
import Benchmark
import Foundation
import Logging
import TouchstoneStore

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 20_000
    )

    // Each sample runs many operations (the scaling factor) after the store is opened, so the numbers are per operation.
    // The server's calls, in its order: the start's read of the registration (its challenge is not stored), the
    // finish's joined read (registration, user, whether the challenge was answered) and its completing write (the
    // answered challenge, use, session, audit event).
    Benchmark("biometric sign-in: read registration, read attempt, complete (one device)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let (store, path) = try await openStore()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let now = Date()
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let challenge = "c\(iteration)"
            blackHole(try await store.signInRegistration(id: "r1"))
            blackHole(try await store.signInAttempt(registrationId: "r1", challenge: challenge))
            let session = SessionRecord(
                tokenHash: "t\(iteration)", userId: "u1", createdAt: now, expiresAt: now + 3600, idleExpiresAt: now + 900,
                authenticatedAt: now, passwordAuthenticatedAt: nil, methods: [.biometric]
            )
            let event = AuditEventRecord(
                id: String(format: "%016x", iteration), occurredAt: now, type: "biometric_login", outcome: "success",
                userId: "u1", registrationId: "r1", passkeyId: nil, clientAddress: "127.0.0.1", userAgent: "bench"
            )
            let answered = ChallengeRecord(challenge: challenge, registrationId: "r1", purpose: .authentication, createdAt: now, expiresAt: now + 360)
            blackHole(try await store.completeSignIn(challenge: answered, session: session, events: [event], at: now))
        }
        benchmark.stopMeasurement()
        try await store.shutdown()
    }

    Benchmark("session lookup by token hash", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let (store, path) = try await openStore()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let now = Date()
        try await store.insertSession(
            SessionRecord(
                tokenHash: "t", userId: "u1", createdAt: now, expiresAt: now + 3600, idleExpiresAt: now + 900,
                authenticatedAt: now, passwordAuthenticatedAt: now, methods: [.password]
            )
        )
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try await store.session(tokenHash: "t")) }
        benchmark.stopMeasurement()
        try await store.shutdown()
    }
}

/// A new database with one user and one active registration.
func openStore() async throws -> (SQLTouchstoneStore, String) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("touchstone-bench-\(UUID().uuidString).sqlite").path
    let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "bench"))
    try await store.migrate()
    let now = Date()
    try await store.insertUser(UserRecord(id: "u1", email: "u1@example.com", displayName: nil, passwordHash: "x", createdAt: now))
    try await store.insertRegistration(
        RegistrationRecord(
            id: "r1", userId: "u1", deviceId: "d1", deviceName: "Phone", algorithm: "ES256", publicKey: [1, 2, 3],
            keyFingerprint: "fp", status: .pending, createdAt: now
        )
    )
    _ = try await store.activateRegistration(id: "r1", replacing: .sameDevice, at: now)
    return (store, path)
}
