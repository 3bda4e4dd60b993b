public import Foundation
public import Hummingbird
public import HummingbirdTesting
public import TouchstoneServer
public import TouchstoneStore
import Logging

/// Runs the real application against a fresh SQLite file with a manual clock.
public enum TestServer {
    /// A configuration for tests: a temporary SQLite file, cheap bcrypt, port 0.
    public static func configuration(_ customize: (inout TouchstoneConfiguration) -> Void = { _ in }) -> TouchstoneConfiguration {
        var configuration = TouchstoneConfiguration()
        configuration.port = 0
        configuration.database = .sqliteFile(path: temporaryDatabasePath())
        configuration.bcryptCost = 4
        configuration.logLevel = .warning
        // Off in tests unless a test turns them on.
        configuration.rateLimits.enabled = false
        customize(&configuration)
        return configuration
    }

    /// A unique path for a throwaway SQLite database.
    public static func temporaryDatabasePath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("touchstone-test-\(UUID().uuidString).sqlite").path
    }

    /// Dependencies with the manual clock and the system's random generator.
    public static func dependencies(clock: ManualClock, store: (any TouchstoneStore)? = nil) -> TouchstoneDependencies {
        var dependencies = TouchstoneDependencies.live
        dependencies.now = { clock.now }
        dependencies.store = store
        return dependencies
    }

    /// Builds the application and runs `body` with a client, in process (`.router`) or over loopback (`.live`).
    public static func run<Value: Sendable>(
        _ setup: TestingSetup = .router,
        configuration: TouchstoneConfiguration = TestServer.configuration(),
        clock: ManualClock = ManualClock(),
        store: (any TouchstoneStore)? = nil,
        _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        let app = try await buildApplication(
            configuration: configuration,
            dependencies: dependencies(clock: clock, store: store)
        )
        return try await app.test(setup, body)
    }
}
