import Foundation
import HTTPTypes
import Testing
import TouchstoneServer
import TouchstoneTesting

/// Issue #12 item 9: a test run leaves no databases behind, whether the test passes or fails.
struct TemporaryFilesTests {
    struct Deliberate: Error {}

    @Test func theTestServerRemovesItsDatabaseWhenTheTestPasses() async throws {
        let configuration = TestServer.configuration()
        let path = try #require(Self.path(of: configuration))
        try await TestServer.run(configuration: configuration) { client in
            _ = try await client.request(.get, "/health")
            #expect(FileManager.default.fileExists(atPath: path))
        }
        #expect(Self.leftovers(path).isEmpty, "left behind: \(Self.leftovers(path))")
    }

    @Test func theTestServerRemovesItsDatabaseWhenTheTestFails() async throws {
        let configuration = TestServer.configuration()
        let path = try #require(Self.path(of: configuration))
        await #expect(throws: Deliberate.self) {
            try await TestServer.run(configuration: configuration) { client in
                _ = try await client.request(.get, "/health")
                throw Deliberate()
            }
        }
        #expect(Self.leftovers(path).isEmpty, "left behind: \(Self.leftovers(path))")
    }

    @Test func temporaryFilesLiveInOneDirectoryPerProcess() {
        let path = TemporaryFiles.path("probe", suffix: ".sqlite")
        #expect(path.hasPrefix(TemporaryFiles.directory.path + "/"))
        #expect(TemporaryFiles.directory.lastPathComponent == "touchstone-tests-\(ProcessInfo.processInfo.processIdentifier)")
    }

    static func path(of configuration: TouchstoneConfiguration) -> String? {
        if case .sqliteFile(let path) = configuration.database { path } else { nil }
    }

    /// The database file and the SQLite files beside it that still exist.
    static func leftovers(_ path: String) -> [String] {
        ["", "-wal", "-shm", "-journal", ".kek"].map { path + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
    }
}
