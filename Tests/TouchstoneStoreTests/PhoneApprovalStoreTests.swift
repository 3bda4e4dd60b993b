import Foundation
import SQLKit
import Testing
import TouchstoneStore

/// Sign-in requests approved on a phone, device channels and pauses (issue #34), on every engine.
struct PhoneApprovalStoreTests {
    static let t0 = StoreTests.t0

    static func request(_ id: String, email: String?, user: String?, at offset: TimeInterval = 0, ttl: TimeInterval = 120) -> SignInRequestRecord {
        SignInRequestRecord(
            id: id, kind: .signIn, email: email, userId: user, clientId: nil, clientName: "Touchstone", pollTokenHash: "poll-\(id)",
            secretHash: "secret-\(id)", number: 42, choices: [17, 42, 88], browserAddress: "192.0.2.1", browserUserAgent: "UA",
            createdAt: t0.addingTimeInterval(offset), expiresAt: t0.addingTimeInterval(offset + ttl))
    }

    static func decision(_ status: SignInRequestRecord.Status, registration: String = "r1", reason: String? = nil) -> SignInRequestDecision {
        SignInRequestDecision(status: status, registrationId: registration, reason: reason, signature: "sig")
    }

    @Test(arguments: TestDatabase.available)
    func atMostThreePendingPerAddressAndOnlyUnexpiredOnesCount(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(RecoveryStoreTests.user("u1", "a@example.com"))
            for index in 1...3 {
                #expect(try await store.insertSignInRequest(Self.request("q\(index)", email: "a@example.com", user: "u1"), maximumPending: 3, events: [], at: Self.t0))
            }
            #expect(try await !store.insertSignInRequest(Self.request("q4", email: "a@example.com", user: "u1"), maximumPending: 3, events: [], at: Self.t0))
            #expect(try await store.signInRequest(id: "q4") == nil)
            // The same cap for an address without an account; none for requests without an address.
            for index in 1...3 {
                #expect(try await store.insertSignInRequest(Self.request("n\(index)", email: "n@example.com", user: nil), maximumPending: 3, events: [], at: Self.t0))
            }
            #expect(try await !store.insertSignInRequest(Self.request("n4", email: "n@example.com", user: nil), maximumPending: 3, events: [], at: Self.t0))
            for index in 1...4 {
                #expect(try await store.insertSignInRequest(Self.request("x\(index)", email: nil, user: nil), maximumPending: 3, events: [], at: Self.t0))
            }
            // A decided request no longer counts; nor does an expired one.
            #expect(try await store.decideSignInRequest(id: "q1", decision: Self.decision(.declined, reason: "cancel"), events: [], at: Self.t0))
            #expect(try await store.insertSignInRequest(Self.request("q5", email: "a@example.com", user: "u1"), maximumPending: 3, events: [], at: Self.t0))
            let later = Self.t0.addingTimeInterval(121)
            #expect(try await store.insertSignInRequest(Self.request("q6", email: "a@example.com", user: "u1", at: 121), maximumPending: 3, events: [], at: later))
            #expect(try await store.pendingSignInRequests(userId: "u1", at: later).map(\.id) == ["q6"])
            #expect(try await store.signInRequest(pollTokenHash: "poll-q3")?.id == "q3")
            let stored = try #require(try await store.signInRequest(id: "q2"))
            #expect(stored == Self.request("q2", email: "a@example.com", user: "u1"))
        }
    }

    /// Issue #44 item 4: the cap holds exactly under concurrent requests from two instances (two stores, each with its
    /// own connections): the address's row in serial_keys makes them take turns. Without it, PostgreSQL let several
    /// concurrent inserts each count the others' uncommitted rows as absent.
    @Test(arguments: TestDatabase.available.filter(\.isPersistent))
    func theCapHoldsUnderConcurrentRequestsFromTwoInstances(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let first = try await fixture.open()
            let second = try await fixture.open(migrate: false)
            for round in 0..<3 {
                let email = "race-\(round)@example.com"
                let inserted = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<12 {
                        let store = index % 2 == 0 ? first : second
                        group.addTask {
                            try await store.insertSignInRequest(
                                Self.request("r\(round)-\(index)", email: email, user: nil), maximumPending: 3, events: [], at: Self.t0)
                        }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(inserted == 3, "round \(round): \(inserted) pending requests for one address")
            }
            // The purge drops an address's row once the address has no request left.
            let raw = try await fixture.openExecutor()
            let keys = { try await raw.withDatabase { db in try await db.raw("SELECT key FROM serial_keys").all().count } }
            #expect(try await keys() == 3)
            _ = try await first.purgeExpired(before: Self.t0.addingTimeInterval(120 + 86_401))
            #expect(try await keys() == 0)
            try await raw.shutdown()
            try await second.shutdown()
            try await first.shutdown()
        }
    }

    @Test(arguments: TestDatabase.available)
    func oneDecisionOneRedemptionAndBindingOnce(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(RecoveryStoreTests.user("u1", "a@example.com"))
            try await store.insertUser(RecoveryStoreTests.user("u2", "b@example.com"))
            try await store.insertRegistration(StoreTests.registration("r1", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "r1", replacing: .sameDevice, at: Self.t0)
            #expect(try await store.insertSignInRequest(Self.request("q", email: nil, user: nil), maximumPending: 3, events: [], at: Self.t0))
            #expect(try await store.bindSignInRequest(id: "q", userId: "u1", at: Self.t0))
            #expect(try await !store.bindSignInRequest(id: "q", userId: "u2", at: Self.t0))
            #expect(try await store.signInRequest(id: "q")?.userId == "u1")
            #expect(try await !store.redeemSignInRequest(id: "q", at: Self.t0))
            async let a = store.decideSignInRequest(id: "q", decision: Self.decision(.approved), events: [], at: Self.t0)
            async let b = store.decideSignInRequest(id: "q", decision: Self.decision(.declined, reason: "cancel"), events: [], at: Self.t0)
            #expect(try await [a, b].filter { $0 }.count == 1)
            let decided = try #require(try await store.signInRequest(id: "q"))
            #expect(decided.decidedAt == Self.t0 && decided.registrationId == "r1" && decided.signature == "sig")
            if decided.status == .approved {
                async let first = store.redeemSignInRequest(id: "q", at: Self.t0)
                async let second = store.redeemSignInRequest(id: "q", at: Self.t0)
                #expect(try await [first, second].filter { $0 }.count == 1)
                #expect(try await store.signInRequest(id: "q")?.redeemedAt == Self.t0)
            }
            // Expired: no decision.
            #expect(try await store.insertSignInRequest(Self.request("e", email: nil, user: "u1"), maximumPending: 3, events: [], at: Self.t0))
            #expect(try await !store.decideSignInRequest(id: "e", decision: Self.decision(.approved), events: [], at: Self.t0.addingTimeInterval(120)))
        }
    }

    @Test(arguments: TestDatabase.available)
    func pollsAreSpacedAndChannelsFollowTheirRegistration(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(RecoveryStoreTests.user("u1", "a@example.com"))
            #expect(try await store.insertSignInRequest(Self.request("q", email: nil, user: "u1"), maximumPending: 3, events: [], at: Self.t0))
            #expect(try await store.recordSignInRequestPoll(id: "q", interval: 5, at: Self.t0))
            #expect(try await !store.recordSignInRequestPoll(id: "q", interval: 5, at: Self.t0.addingTimeInterval(4)))
            #expect(try await store.recordSignInRequestPoll(id: "q", interval: 5, at: Self.t0.addingTimeInterval(5)))

            try await store.insertRegistration(StoreTests.registration("r1", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "r1", replacing: .sameDevice, at: Self.t0)
            #expect(try await !store.setPushToken(registrationId: "r1", platform: "apns", token: "ab", at: Self.t0))
            try await store.setDeviceCredential(registrationId: "r1", credentialHash: "h1", at: Self.t0)
            #expect(try await store.setPushToken(registrationId: "r1", platform: "apns", token: "ab", at: Self.t0))
            try await store.setDeviceCredential(registrationId: "r1", credentialHash: "h2", at: Self.t0)
            #expect(try await store.deviceChannel(registrationId: "r1") == DeviceChannelRecord(registrationId: "r1", credentialHash: "h2", createdAt: Self.t0, pushPlatform: "apns", pushToken: "ab"))
            #expect(try await store.deviceChannels(userId: "u1").map(\.registrationId) == ["r1"])
            try await store.clearPushToken(registrationId: "r1", token: "other")
            #expect(try await store.deviceChannel(registrationId: "r1")?.pushToken == "ab")
            try await store.clearPushToken(registrationId: "r1", token: "ab")
            #expect(try await store.deviceChannel(registrationId: "r1")?.pushToken == nil)
            #expect(try await store.setPushToken(registrationId: "r1", platform: "apns", token: "ab", at: Self.t0))
            #expect(try await store.updateRegistrationStatus(id: "r1", from: [.active], to: .revoked, at: Self.t0))
            #expect(try await store.deviceChannels(userId: "u1").isEmpty)

            try await store.pausePhoneApprovals(userId: "u1", until: Self.t0.addingTimeInterval(3600))
            #expect(try await store.phoneApprovalsPausedUntil(userId: "u1", at: Self.t0) == Self.t0.addingTimeInterval(3600))
            #expect(try await store.phoneApprovalsPausedUntil(userId: "u1", at: Self.t0.addingTimeInterval(3600)) == nil)
            // The purge removes requests a day after they ended, and pauses that are over.
            _ = try await store.purgeExpired(before: Self.t0.addingTimeInterval(120 + 86_401))
            #expect(try await store.signInRequest(id: "q") == nil)
            #expect(try await store.phoneApprovalsPausedUntil(userId: "u1", at: Self.t0) == nil)
            // Deleting the user deletes what was theirs.
            #expect(try await store.deleteUser(id: "u1", at: Date()))
            #expect(try await store.deviceChannel(registrationId: "r1") == nil)
        }
    }
}
