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

    /// A unique path for a throwaway SQLite database, in ``TemporaryFiles/directory``; ``run(_:configuration:clock:store:_:)``
    /// removes it when the run ends.
    public static func temporaryDatabasePath() -> String {
        TemporaryFiles.path("touchstone-test", suffix: ".sqlite")
    }

    /// Removes the configuration's database file if it is one of ``temporaryDatabasePath()``'s.
    public static func removeDatabase(of configuration: TouchstoneConfiguration) {
        if case .sqliteFile(let path) = configuration.database, path.hasPrefix(TemporaryFiles.directory.path) {
            TemporaryFiles.remove(path)
        }
    }

    /// Dependencies with the manual clock and the system's random generator.
    public static func dependencies(clock: ManualClock, store: (any TouchstoneStore)? = nil, mailbox: TestMailbox = TestMailbox()) -> TouchstoneDependencies {
        var dependencies = TouchstoneDependencies.live
        dependencies.now = { clock.now }
        dependencies.store = store
        // Mail stays in memory: a test that reads it passes its own mailbox.
        dependencies.mailTransport = mailbox
        return dependencies
    }

    /// Runs the application on the configuration's SQLite file, opened here with one admin key (`ops`); `body` gets the
    /// client, the key and the store.
    public static func runWithAdminKey(
        _ setup: TestingSetup = .router,
        configuration: TouchstoneConfiguration = TestServer.configuration(),
        clock: ManualClock = ManualClock(),
        postForm: (@Sendable (String, String) async throws -> Int)? = nil,
        postWebhook: (@Sendable (WebhookPost) async -> WebhookPostResult)? = nil,
        _ body: @Sendable (any TestClientProtocol, String, any TouchstoneStore) async throws -> Void
    ) async throws {
        guard case .sqliteFile(let path) = configuration.database else {
            preconditionFailure("runWithAdminKey needs a SQLite file database")
        }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await store.migrate()
        let (key, _) = try await AdminKeys.create(name: "ops", store: store)
        try await Self.run(setup, configuration: configuration, clock: clock, store: store, postForm: postForm, postWebhook: postWebhook) { client in
            try await body(client, key, store)
        }
    }

    /// Builds the application and runs `body` with a client, in process (`.router`) or over loopback (`.live`).
    public static func run<Value: Sendable>(
        _ setup: TestingSetup = .router,
        configuration: TouchstoneConfiguration = TestServer.configuration(),
        clock: ManualClock = ManualClock(),
        store: (any TouchstoneStore)? = nil,
        postForm: (@Sendable (String, String) async throws -> Int)? = nil,
        postWebhook: (@Sendable (WebhookPost) async -> WebhookPostResult)? = nil,
        mailbox: TestMailbox = TestMailbox(),
        _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        defer { Self.removeDatabase(of: configuration) }
        var dependencies = dependencies(clock: clock, store: store, mailbox: mailbox)
        dependencies.postForm = postForm
        dependencies.postWebhook = postWebhook
        let app = try await buildApplication(configuration: configuration, dependencies: dependencies)
        return try await app.test(setup, body)
    }
}
