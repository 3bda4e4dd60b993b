import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// A server on SQLite records the bound on the `iat` of the proofs it accepts (`dpop.issued_until`) before it accepts
/// one past it; when that write fails the proof is refused with 503, unrecorded, and accepted once the write succeeds.
struct DPoPIssueMarkOutageTests {
    /// Settings whose mark cannot be written while `down` is set.
    struct FailingMark: SettingStore {
        let inner: any SettingStore
        let down: NIOLockedValueBox<Bool>

        func setting(name: String) async throws -> String? { try await self.inner.setting(name: name) }
        func saveSetting(name: String, value: String, at: Date) async throws {
            if name == "dpop.issued_until", self.down.withLockedValue({ $0 }) { throw StoreError.unavailable("down") }
            try await self.inner.saveSetting(name: name, value: value, at: at)
        }
        func insertSetting(name: String, value: String, at: Date) async throws -> Bool {
            try await self.inner.insertSetting(name: name, value: value, at: at)
        }
    }

    @Test func aProofWhoseMarkCannotBeWrittenIsRefusedAndAcceptedOnceItCanBe() async throws {
        let configuration = TestServer.configuration { $0.tokens.issuer = "https://auth.example.com" }
        guard case .sqliteFile(let path) = configuration.database else { preconditionFailure("needs a SQLite file") }
        let inner = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await inner.migrate()
        let down = NIOLockedValueBox(true)
        var store = ComposedStore(inner)
        store.settings = FailingMark(inner: inner, down: down)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try await TestServer.run(configuration: configuration, clock: ManualClock(start), store: store) { client in
            let session = try await DPoPBadProofTests.sessionToken(client)
            let proof = DPoPProofMaker.p256().proof(url: DPoPBadProofTests.url, iat: start)
            let refused = try await DPoPBadProofTests.issue(client, session, proofs: [proof])
            #expect(refused.status == .serviceUnavailable && refused.errorCode == "storage_unavailable", "\(refused.body)")
            #expect(try await inner.setting(name: "dpop.issued_until") == nil)
            down.withLockedValue { $0 = false }
            let accepted = try await DPoPBadProofTests.issue(client, session, proofs: [proof])
            #expect(accepted.status == .ok)
            #expect(try await inner.setting(name: "dpop.issued_until") == String(start.addingTimeInterval(10).millis))
        }
    }
}
