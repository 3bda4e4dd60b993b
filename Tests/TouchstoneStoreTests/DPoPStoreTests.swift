import Foundation
import Testing
import TouchstoneStore

/// The DPoP replay record (issue #43): a key's `jti` is accepted once, across connections (two instances), until the
/// purge removes it after its expiry; on every engine.
struct DPoPStoreTests {
    @Test(arguments: TestDatabase.available)
    func aJtiIsRecordedOnceAcrossConnections(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let first = try await fixture.open()
            let until = StoreTests.t0.addingTimeInterval(60)
            #expect(try await first.recordDPoPProof(thumbprint: "k1", jti: "j1", expiresAt: until))
            #expect(try await first.recordDPoPProof(thumbprint: "k1", jti: "j1", expiresAt: until) == false)
            #expect(try await first.recordDPoPProof(thumbprint: "k2", jti: "j1", expiresAt: until), "another key's jti")
            if database.isPersistent {
                // The other instance sees the same record.
                let second = try await fixture.open(migrate: false)
                #expect(try await second.recordDPoPProof(thumbprint: "k1", jti: "j1", expiresAt: until) == false)
                try await second.shutdown()
            }
            // Concurrent uses of one jti: exactly one wins.
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await first.recordDPoPProof(thumbprint: "k3", jti: "race", expiresAt: until) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            // Purged once expired.
            _ = try await first.purgeExpired(before: until.addingTimeInterval(1))
            #expect(try await first.recordDPoPProof(thumbprint: "k1", jti: "j1", expiresAt: until.addingTimeInterval(120)))
            try await first.shutdown()
        }
    }
}
