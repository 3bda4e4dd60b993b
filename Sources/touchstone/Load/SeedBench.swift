import ArgumentParser
import Crypto
import Foundation
import Logging
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore

/// Fills a database with accounts and active registrations, to measure the server with a realistic amount of data.
struct SeedBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Add accounts with one active ES256 registration each, straight into a database (for benchmarks only).",
        discussion: """
            The accounts cannot sign in: their password hash is not a bcrypt hash, and no private key is kept. They \
            exist so that `bench login` runs against tables of a realistic size. Run it while no server uses the \
            database, or alongside one (both go through the same store).
            """
    )

    @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
    var database: String?

    @Option(name: .long, help: "Registrations (and accounts) to add.")
    var registrations: Int

    func validate() throws {
        guard (1...10_000_000).contains(self.registrations) else { throw ValidationError("--registrations must be 1...10000000") }
    }

    func run() async throws {
        let location = try await withStore(database: self.database) { store, location in
            try await Self.seed(self.registrations, into: store)
            return location
        }
        print("added \(self.registrations) accounts with an active registration to \(location)")
    }

    /// Inserts from 32 concurrent tasks, so that writes share commits as a busy server's would.
    static func seed(_ count: Int, into store: any TouchstoneStore) async throws {
        let runId = UUID().uuidString.prefix(8).lowercased()
        let now = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            let workers = 32
            for worker in 0..<workers {
                group.addTask {
                    for index in stride(from: worker, to: count, by: workers) {
                        let userId = UUID().uuidString.lowercased()
                        try await store.insertUser(
                            UserRecord(
                                id: userId,
                                email: "seed-\(runId)-\(index)@bench.invalid",
                                displayName: nil,
                                passwordHash: "!seeded-no-password",
                                createdAt: now
                            )
                        )
                        let key = try DevicePublicKey(
                            bytes: [UInt8](P256.Signing.PrivateKey().publicKey.derRepresentation),
                            algorithm: .es256
                        )
                        try await store.insertRegistration(
                            RegistrationRecord(
                                id: UUID().uuidString.lowercased(),
                                userId: userId,
                                deviceId: "seed-\(runId)-\(index)",
                                deviceName: "seeded device",
                                algorithm: SignatureAlgorithm.es256.rawValue,
                                publicKey: key.spkiDERRepresentation,
                                keyFingerprint: key.fingerprint,
                                status: .active,
                                createdAt: now
                            )
                        )
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
