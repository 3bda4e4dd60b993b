import Foundation
import Testing
import TouchstoneStore

/// Issue #44 item 4, one account per device: concurrent activations of two accounts' registrations for one device,
/// from two stores (two instances' connections), leave exactly one active; the partial unique index decides the race
/// and the loser gets a conflict. (The sign-in request cap's race is in PhoneApprovalStoreTests; the database-kept rate
/// limits' in SecurityStoreTests.)
struct CapsAcrossInstancesTests {
    @Test(arguments: TestDatabase.available.filter(\.isPersistent))
    func oneAccountPerDeviceHoldsUnderConcurrentActivations(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let first = try await fixture.open()
            let second = try await fixture.open(migrate: false)
            for round in 0..<4 {
                let device = "shared-\(round)"
                let ids = (0..<6).map { "reg-\(round)-\($0)" }
                for (index, id) in ids.enumerated() {
                    try await first.insertUser(StoreTests.user("user-\(round)-\(index)"))
                    try await first.insertRegistration(StoreTests.registration(id, user: "user-\(round)-\(index)", device: device))
                }
                let activated = await withTaskGroup(of: Bool.self) { group in
                    for (index, id) in ids.enumerated() {
                        let store = index % 2 == 0 ? first : second
                        group.addTask { (try? await store.activateRegistration(id: id, replacing: .sameDevice, at: StoreTests.t0)) != nil }
                    }
                    return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(activated == 1, "round \(round): \(activated) accounts activated on one device")
                var active = 0
                for id in ids where try await first.registration(id: id)?.status == .active { active += 1 }
                #expect(active == 1, "round \(round)")
            }
            try await second.shutdown()
            try await first.shutdown()
        }
    }
}
