import ArgumentParser
import Foundation
import Logging
import TouchstoneServer
import TouchstoneStore

/// Opens (and migrates) the store `--database` or `TOUCHSTONE_DATABASE_URL` names, runs `body`, and closes it.
func withStore<T>(database: String?, _ body: (any TouchstoneStore) async throws -> T) async throws -> T {
    try await withStore(database: database) { store, _ in try await body(store) }
}

/// The same, also giving `body` the location (for messages; a PostgreSQL password is masked).
func withStore<T>(database: String?, _ body: (any TouchstoneStore, DatabaseLocation) async throws -> T) async throws -> T {
    try await withStore(database: database) { store, configuration, _ in try await body(store, configuration.database) }
}

/// The same, giving `body` the whole configuration (`TOUCHSTONE_*` variables, `--database`) and a logger.
func withStore<T>(
    database: String?,
    _ body: (any TouchstoneStore, TouchstoneConfiguration, Logger) async throws -> T
) async throws -> T {
    var configuration = try environmentConfiguration()
    if let database { configuration.database = try parseDatabase(database) }
    var logger = Logger(label: "touchstone")
    logger.logLevel = .warning
    let store = try await openStore(configuration.database, logger: logger)
    do {
        try await store.migrate()
        let result = try await body(store, configuration, logger)
        try await store.shutdown()
        return result
    } catch {
        try? await store.shutdown()
        throw error
    }
}

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the admin keys of the admin API (/v1/admin) and client addresses blocked after failed sign-ins.",
        subcommands: [CreateKey.self, ListKeys.self, RevokeKey.self, BlockedAddressesCommand.self, Unblock.self]
    )

    struct CreateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-key",
            abstract: "Create an admin key and print it once; only its hash is stored."
        )

        @Option(name: .long, help: "A name for the key, recorded in the audit trail of what it does.")
        var name: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func validate() throws {
            guard !self.name.isEmpty, self.name.utf8.count <= 100 else { throw ValidationError("--name must be 1 to 100 bytes") }
        }

        func run() async throws {
            let (key, record) = try await withStore(database: self.database) { store in
                try await AdminKeys.create(name: self.name, store: store)
            }
            FileHandle.standardError.write(Data("admin key '\(record.name)' (id \(record.id)); it is shown only now:\n".utf8))
            print(key)
        }
    }

    struct ListKeys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list-keys", abstract: "List admin keys (never the keys themselves).")

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let keys = try await withStore(database: self.database) { try await $0.adminKeys() }
            for key in keys {
                let state = key.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                print("\(key.id)  \(key.name)  created \(key.createdAt.formatted(.iso8601))  \(state)")
            }
        }
    }

    struct RevokeKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke-key", abstract: "Revoke an admin key by id.")

        @Argument(help: "The key's id (from list-keys).")
        var id: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            guard try await withStore(database: self.database, { try await $0.revokeAdminKey(id: self.id, at: Date()) }) else {
                throw ValidationError("no active admin key with id \(self.id)")
            }
            print("revoked \(self.id)")
        }
    }
}

extension Admin {
    struct BlockedAddressesCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "blocked-addresses",
            abstract: "List client addresses refused after too many failed password or PIN checks."
        )

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let blocked = try await withStore(database: self.database) { try await BlockedAddresses.list(store: $0) }
            for entry in blocked {
                let until = (entry.blockedUntil ?? entry.lastFailureAt).rfc3339
                print("\(entry.address)  \(entry.failures) failures  blocked until \(until)")
            }
        }
    }

    struct Unblock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lift the block of a client address (recorded in the audit trail as address.unblocked)."
        )

        @Argument(help: "The address, as blocked-addresses prints it.")
        var address: String

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let unblocked = try await withStore(database: self.database) {
                try await BlockedAddresses.unblock(self.address, actor: "cli", store: $0)
            }
            guard unblocked else { throw ValidationError("\(self.address) is not blocked") }
            print("unblocked \(self.address)")
        }
    }
}

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the audit trail.",
        subcommands: [Export.self]
    )

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write audit events as JSON Lines (oldest first) to standard output or a file."
        )

        @Option(name: .long, help: "Only events at or after this time (RFC 3339, e.g. 2026-11-01T00:00:00Z).")
        var since: String?

        @Option(name: .long, help: "Only events before this time (RFC 3339).")
        var until: String?

        @Option(name: .long, help: "Only this user's events.")
        var user: String?

        @Option(name: .long, help: "Only events of this type (password_login, registration.locked, ...).")
        var type: String?

        @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
        var output: String?

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let since = try self.since.map { try Self.date($0, "--since") }
            let until = try self.until.map { try Self.date($0, "--until") }
            let handle: FileHandle
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: nil),
                    let file = FileHandle(forWritingAtPath: output)
                else {
                    throw ValidationError("cannot write \(output)")
                }
                handle = file
            } else {
                handle = FileHandle.standardOutput
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(date.rfc3339)
            }
            let count = try await withStore(database: self.database) { store -> Int in
                var query = AuditEventQuery(userId: self.user, type: self.type, since: since, until: until, limit: 1000, ascending: true)
                var count = 0
                while true {
                    let page = try await store.auditEvents(query)
                    for event in page {
                        handle.write(try encoder.encode(event) + Data("\n".utf8))
                    }
                    count += page.count
                    guard page.count == query.limit, let last = page.last else { break }
                    query.after = AuditCursor(occurredAt: last.occurredAt, id: last.id)
                }
                return count
            }
            if self.output != nil { try handle.close() }
            FileHandle.standardError.write(Data("exported \(count) events\n".utf8))
        }

        static func date(_ text: String, _ option: String) throws -> Date {
            if let date = Date(rfc3339: text) { return date }
            throw ValidationError("\(option) must be an RFC 3339 time such as 2026-11-01T00:00:00Z")
        }
    }
}
