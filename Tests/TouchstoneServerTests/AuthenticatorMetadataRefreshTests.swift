import Foundation
import Logging
import Synchronization
import Testing
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

@testable import TouchstoneServer

/// When the metadata service fetches: on a manual clock, with a download that counts its calls and serves what the test
/// says (no network, no sleeping).
struct AuthenticatorMetadataRefreshTests {
    final class Source: Sendable {
        let served = Mutex<Result<String, MetadataDownloadError>>(.failure(MetadataDownloadError(message: "nothing yet")))
        let calls = Mutex(0)

        func download(_ url: String) async throws -> String {
            self.calls.withLock { $0 += 1 }
            return try self.served.withLock { try $0.get() }
        }
    }

    static func service(_ source: Source, clock: ManualClock, store: any TouchstoneStore, root: TestMetadataService) -> AuthenticatorMetadataService {
        var settings = AuthenticatorMetadataSettings()
        settings.url = "https://mds.example/"
        settings.roots = [root.root]
        settings.retryInterval = .seconds(3600)
        return AuthenticatorMetadataService(
            settings: settings,
            store: store,
            now: { clock.now },
            logger: Logger(label: "test"),
            download: { try await source.download($0) }
        )
    }

    static func store() async throws -> (SQLTouchstoneStore, String) {
        let path = TemporaryFiles.path("mds-refresh", suffix: ".sqlite")
        let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await store.migrate()
        return (store, path)
    }

    @Test func fetchesWhenDueAndRetriesAfterFailures() async throws {
        let clock = ManualClock()  // 2027-01-15
        let mds = try TestMetadataService()
        let source = Source()
        let (store, path) = try await Self.store()
        defer { TemporaryFiles.remove(path) }
        let service = Self.service(source, clock: clock, store: store, root: mds)

        // Nothing loaded: the first refresh fetches, fails, and waits the retry interval.
        await service.refresh()
        #expect(source.calls.withLock { $0 } == 1)
        #expect(service.current == nil)
        #expect(service.status.lastError == "nothing yet")
        source.served.withLock { $0 = .success(try! mds.blob(number: 1, nextUpdate: "2027-02-01", entries: [])) }
        await service.refresh()
        #expect(source.calls.withLock { $0 } == 1)  // not before the retry interval
        clock.advance(by: 3600)
        await service.refresh()
        #expect(source.calls.withLock { $0 } == 2)
        #expect(service.current?.number == 1)
        #expect(service.status.lastError == nil)
        #expect(try await store.metadataBLOB()?.number == 1)

        // Until nextUpdate (2027-02-01) nothing is fetched, however often the refresh runs.
        for _ in 0..<5 {
            clock.advance(by: 86_400)
            await service.refresh()
        }
        #expect(source.calls.withLock { $0 } == 2)
        // At nextUpdate it fetches; the same BLOB again is "nothing newer yet": retried an hour later.
        clock.advance(by: 12 * 86_400)  // 2027-02-01
        await service.refresh()
        #expect(source.calls.withLock { $0 } == 3)
        await service.refresh()
        #expect(source.calls.withLock { $0 } == 3)
        source.served.withLock { $0 = .success(try! mds.blob(number: 2, nextUpdate: "2027-03-01", entries: [])) }
        clock.advance(by: 3600)
        await service.refresh()
        #expect(source.calls.withLock { $0 } == 4)
        #expect(service.current?.number == 2)
        try await store.shutdown()
    }

    @Test func anotherInstancesNewerBLOBIsAdoptedWithoutFetching() async throws {
        let clock = ManualClock()
        let mds = try TestMetadataService()
        let (store, path) = try await Self.store()
        defer { TemporaryFiles.remove(path) }
        let source = Source()
        source.served.withLock { $0 = .success(try! mds.blob(number: 1, nextUpdate: "2027-02-01", entries: [])) }
        let first = Self.service(source, clock: clock, store: store, root: mds)
        await first.refresh()
        #expect(first.current?.number == 1)
        // Another instance stores BLOB 3 (as its own refresh would); this one adopts it at its next refresh.
        let newer = try mds.blob(number: 3, nextUpdate: "2027-02-10", entries: [])
        #expect(try await store.saveMetadataBLOB(MetadataBLOBRecord(number: 3, nextUpdate: clock.now, blob: newer, source: "other", storedAt: clock.now)))
        await first.refresh()
        #expect(first.current?.number == 3)
        #expect(first.status.source == "other")
        #expect(source.calls.withLock { $0 } == 1)
        // A stored BLOB that does not verify (written by someone else into the database) is not used.
        let forged = try TestMetadataService().blob(number: 4, nextUpdate: "2027-02-10", entries: [])
        #expect(try await store.saveMetadataBLOB(MetadataBLOBRecord(number: 4, nextUpdate: clock.now, blob: forged, source: "forged", storedAt: clock.now)))
        await first.refresh()
        #expect(first.current?.number == 3)
        try await store.shutdown()
    }
}
