import Foundation
import Testing
import TouchstoneStore

// App Attest counters and the lockout counts of device keys and passkeys under concurrency.
extension StoreTests {
    @Test(arguments: engines)
    func appAttestKeysRoundTripAndTheirCounterMovesOnce(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            let key = AppAttestKeyRecord(
                keyId: "kid", publicKey: [4, 1, 2, 3], appId: "ABCDE12345.com.example.app", environment: "production",
                counter: 0, receipt: [9, 8, 7], createdAt: Self.t0
            )
            try await store.insertAppAttestKey(key)
            await #expect(throws: StoreError.conflict("")) { try await store.insertAppAttestKey(key) }
            #expect(try await store.appAttestKey(keyId: "kid") == key)
            #expect(try await store.appAttestKey(keyId: "other") == nil)
            // Two assertions that both saw counter 0: only one may move it.
            let moved = try await withThrowingTaskGroup(of: Bool.self) { group in
                for counter in [5, 6] as [Int64] {
                    group.addTask { try await store.advanceAppAttestCounter(keyId: "kid", from: 0, to: counter, at: Self.t0) }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(moved.filter { $0 }.count == 1)
            let stored = try #require(try await store.appAttestKey(keyId: "kid"))
            #expect(stored.counter == 5 || stored.counter == 6)
            #expect(stored.lastUsedAt == Self.t0)
            // Never backwards, never to the same value.
            #expect(try await !store.advanceAppAttestCounter(keyId: "kid", from: stored.counter, to: stored.counter, at: Self.t0))
            #expect(try await !store.advanceAppAttestCounter(keyId: "kid", from: stored.counter, to: 1, at: Self.t0))

            try await store.insertUser(Self.user("u1"))
            var registration = Self.registration("a", user: "u1", device: "d1")
            registration.appAttestKeyId = "kid"
            try await store.insertRegistration(registration)
            #expect(try await store.registration(id: "a")?.appAttestKeyId == "kid")
        }
    }
}

extension StoreTests {
    @Test(arguments: engines)
    func concurrentFailuresLockExactlyOnceAtTheThreshold(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            let locked = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 {
                    group.addTask { try await store.recordFailedSignature(registrationId: "a", threshold: 3, at: Self.t0) }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(locked.filter { $0 }.count == 1)
            let registration = try #require(try await store.registration(id: "a"))
            #expect(registration.status == .locked)
            #expect(registration.failedAttempts == 3)  // attempts after the lock are not counted
            #expect(try await store.unlockRegistration(id: "a", at: Self.t0))
            #expect(try await !store.unlockRegistration(id: "a", at: Self.t0))
            let unlocked = try #require(try await store.registration(id: "a"))
            #expect(unlocked.status == .active)
            #expect(unlocked.failedAttempts == 0)
        }
    }
}

extension StoreTests {
    @Test(arguments: engines)
    func concurrentPasskeyFailuresLockOnceAndAUseResetsTheCount(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertPasskey(Self.passkey("p", user: "u1"))
            _ = try await store.recordFailedPasskeyAssertion(id: "p", threshold: 3, at: Self.t0)
            #expect(try await store.completePasskeySignIn(
                challenge: Self.answeredWebAuthn("ok"), passkeyId: "p", signCount: 1, backupEligible: true, backedUp: false, cloneWarning: false,
                session: Self.session("s", user: "u1"), at: Self.t0
            ))
            #expect(try await store.passkey(id: "p")?.failedAttempts == 0)
            let locked = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await store.recordFailedPasskeyAssertion(id: "p", threshold: 3, at: Self.t0) }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(locked.filter { $0 }.count == 1)
            let passkey = try #require(try await store.passkey(id: "p"))
            #expect(passkey.lockedAt == Self.t0)
            #expect(passkey.failedAttempts == 3)
            #expect(try await !store.unlockPasskey(id: "p", userId: "someone-else"))
            #expect(try await store.unlockPasskey(id: "p", userId: "u1"))
            #expect(try await store.passkey(id: "p")?.lockedAt == nil)
        }
    }
}
