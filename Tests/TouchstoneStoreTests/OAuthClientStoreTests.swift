import Foundation
import Testing
import TouchstoneStore

/// The OpenID provider's client registry (issue #31, §1), on every engine.
struct OAuthClientStoreTests {
    static func client(_ id: String, secret: String? = "hash-\(UUID().uuidString)", at offset: TimeInterval = 0) -> OAuthClientRecord {
        OAuthClientRecord(
            id: id,
            name: "App \(id)",
            secretHash: secret,
            redirectURIs: ["https://\(id).example.com/cb", "http://127.0.0.1/cb"],
            postLogoutRedirectURIs: ["https://\(id).example.com/bye"],
            backchannelLogoutURI: "https://\(id).example.com/backchannel",
            firstParty: id.hasPrefix("first"),
            createdAt: StoreTests.t0.addingTimeInterval(offset)
        )
    }

    @Test(arguments: TestDatabase.available)
    func clientsRoundTripRotateAndDelete(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            let confidential = Self.client("c1")
            var publicClient = Self.client("first-public", secret: nil, at: 1)
            publicClient.postLogoutRedirectURIs = []
            publicClient.backchannelLogoutURI = nil
            try await store.insertClient(confidential)
            try await store.insertClient(publicClient)
            #expect(try await store.client(id: "c1") == confidential)
            #expect(try await store.client(id: "first-public") == publicClient)
            #expect(try await store.client(id: "first-public")?.isPublic == true)
            #expect(try await store.clients().map(\.id) == ["c1", "first-public"])
            await #expect(throws: StoreError.conflict("")) { try await store.insertClient(Self.client("c1")) }

            // A new secret replaces the old hash at once; a public client has none to rotate.
            let later = StoreTests.t0.addingTimeInterval(60)
            #expect(try await store.rotateClientSecret(id: "c1", secretHash: "new-hash", at: later))
            #expect(try await store.client(id: "c1")?.secretHash == "new-hash")
            #expect(try await store.client(id: "c1")?.secretRotatedAt == later)
            #expect(try await !store.rotateClientSecret(id: "first-public", secretHash: "x", at: later))
            #expect(try await store.client(id: "first-public")?.secretHash == nil)
            #expect(try await !store.rotateClientSecret(id: "nobody", secretHash: "x", at: later))

            #expect(try await store.deleteClient(id: "c1"))
            #expect(try await !store.deleteClient(id: "c1"))
            #expect(try await store.client(id: "c1") == nil)
            #expect(try await store.clients().map(\.id) == ["first-public"])
            try await store.shutdown()
        }
    }
}
