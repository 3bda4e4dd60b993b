import Foundation
import Testing
import TouchstoneStore

/// The shared authenticator metadata BLOB and the passkeys of named authenticator models, on every engine.
struct MetadataStoreTests {
    static let t0 = StoreTests.t0
    static let engines = TestDatabase.available

    static func record(_ number: Int64, blob: String? = nil) -> MetadataBLOBRecord {
        MetadataBLOBRecord(
            number: number,
            nextUpdate: t0.addingTimeInterval(30 * 86_400),
            blob: blob ?? "blob-\(number)",
            source: "https://mds.example/",
            storedAt: t0.addingTimeInterval(Double(number))
        )
    }

    @Test(arguments: engines)
    func onlyALargerNumberReplacesTheStoredBLOB(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            #expect(try await store.metadataBLOB() == nil)
            #expect(try await store.metadataBLOBNumber() == nil)
            #expect(try await store.saveMetadataBLOB(Self.record(5)))
            #expect(try await store.metadataBLOB() == Self.record(5))
            #expect(try await store.metadataBLOBNumber() == 5)
            // The same number (another instance with the same BLOB) and an older one change nothing.
            #expect(try await !store.saveMetadataBLOB(Self.record(5, blob: "other")))
            #expect(try await !store.saveMetadataBLOB(Self.record(4)))
            #expect(try await store.metadataBLOB()?.blob == "blob-5")
            #expect(try await store.saveMetadataBLOB(Self.record(6)))
            #expect(try await store.metadataBLOB() == Self.record(6))
            // Racing saves of one newer BLOB: exactly one stores it.
            let stored = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await store.saveMetadataBLOB(Self.record(9)) } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(stored == 1)
        }
    }

    @Test(arguments: engines)
    func passkeysAreFoundByModel(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(StoreTests.user("u1"))
            var key = StoreTests.passkey("p1", user: "u1", at: 0)
            key.aaguid = "cb69481e-8ff7-4039-93ec-0a2729a154a8"
            try await store.insertPasskey(key)
            var u2f = StoreTests.passkey("p2", user: "u1", at: 1)
            u2f.attestationKeyId = "0123abcd"
            try await store.insertPasskey(u2f)
            try await store.insertPasskey(StoreTests.passkey("p3", user: "u1", at: 2))
            #expect(try await store.passkey(id: "p2")?.attestationKeyId == "0123abcd")
            #expect(try await store.passkey(id: "p1")?.attestationKeyId == nil)
            #expect(try await store.passkeys(aaguids: [key.aaguid], attestationKeyIds: [], limit: 10).map(\.id) == ["p1"])
            #expect(try await store.passkeys(aaguids: [], attestationKeyIds: ["0123abcd"], limit: 10).map(\.id) == ["p2"])
            #expect(try await store.passkeys(aaguids: [key.aaguid, "x"], attestationKeyIds: ["0123abcd"], limit: 10).map(\.id) == ["p2", "p1"])
            #expect(try await store.passkeys(aaguids: [key.aaguid], attestationKeyIds: ["0123abcd"], limit: 1).map(\.id) == ["p2"])
            #expect(try await store.passkeys(aaguids: [], attestationKeyIds: [], limit: 10).isEmpty)
        }
    }
}
