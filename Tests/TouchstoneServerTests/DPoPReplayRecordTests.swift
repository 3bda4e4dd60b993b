import Foundation
import Logging
import Testing
import TouchstoneDPoP
import TouchstoneStore
import TouchstoneTesting

@testable import TouchstoneServer

/// Where the server keeps the `jti` of the proofs at its API (``DPoPGate/ReplayRecord``), and when a start needs the
/// restart's fence.
struct DPoPReplayRecordTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(_ store: any TouchstoneStore) async -> DPoPGate.ReplayRecord {
        await DPoPGate.replayRecord(
            for: store, settings: DPoPSettings(), clock: { Self.start }, randomBytes: { Array(repeating: 1, count: $0) }, logger: Logger(label: "test"))
    }

    @Test func aNewSQLiteDatabaseHasNoFenceAndTheNextStartHasOne() async throws {
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        guard case .memory(let first) = await Self.record(store) else { Issue.record("not in memory"); return }
        #expect(first.fence == nil)
        guard case .memory(let second) = await Self.record(store) else { Issue.record("not in memory"); return }
        #expect(second.fence?.startedAt == Self.start && second.fence?.isActive(at: Self.start) == true)
        try await store.shutdown()
    }

    @Test func aDatabaseWhoseStartCannotBeReadOrWrittenIsFenced() async throws {
        // Not migrated: no settings table.
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        guard case .memory(let memory) = await Self.record(store) else { Issue.record("not in memory"); return }
        #expect(memory.fence != nil)
        try await store.shutdown()
    }

    @Test func aNewDatabaseWhoseStartCannotBeWrittenIsFencedAllTheSame() async throws {
        // Read fine (no server before), but not written: the next start would believe no server ran before it, so
        // this one must not rely on that either way.
        struct UnwritableStart: SettingStore {
            let inner: any SettingStore
            func setting(name: String) async throws -> String? { try await self.inner.setting(name: name) }
            func saveSetting(name: String, value: String, at: Date) async throws {
                if name == DPoPGate.startSetting { throw StoreError.unavailable("read-only") }
                try await self.inner.saveSetting(name: name, value: value, at: at)
            }
            func insertSetting(name: String, value: String, at: Date) async throws -> Bool {
                try await self.inner.insertSetting(name: name, value: value, at: at)
            }
        }
        let inner = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await inner.migrate()
        var store = ComposedStore(inner)
        store.settings = UnwritableStart(inner: inner)
        guard case .memory(let memory) = await Self.record(store) else { Issue.record("not in memory"); return }
        #expect(memory.fence != nil)
        #expect(try await inner.setting(name: DPoPGate.startSetting) == nil)
        try await inner.shutdown()
    }

    @Test func aSharedDatabaseKeepsTheRecord() async throws {
        let executor = try await SQLiteExecutor.open(.memory, logger: Logger(label: "test"))
        let store = SQLTouchstoneStore(executor: executor)
        guard case .database = await Self.record(store) else { Issue.record("a shared database's record is not the database"); return }
        try await store.shutdown()
    }

    @Test func aLockFileThatCannotBeOpenedStopsTheStart() async throws {
        let configuration = TestServer.configuration {
            $0.database = .sqliteFile(path: "/nonexistent-\(UUID().uuidString)/touchstone.sqlite")
            $0.tokens.keyEncryptionKey = [UInt8](repeating: 7, count: 32)  // not a file beside the database
        }
        do {
            _ = try await buildApplication(configuration: configuration, dependencies: TestServer.dependencies(clock: ManualClock()))
            Issue.record("a server started without its lock file")
        } catch {
            #expect("\(error)".contains("cannot open the lock file"))
        }
    }
}
