import Foundation
import Logging
import SQLKit
import Testing
import TouchstoneStore

/// PINs, the audit trail, rate limits, login failures, admin keys and settings, on every engine.
struct SecurityStoreTests {
    static let t0 = StoreTests.t0
    static let engines = TestDatabase.available

    /// A user with one active registration `r1` whose PIN hash is "pin-hash".
    static func withPinnedRegistration(_ store: SQLTouchstoneStore) async throws {
        try await store.insertUser(StoreTests.user("u1"))
        try await store.insertRegistration(StoreTests.registration("r1", user: "u1", device: "d1"))
        _ = try await store.activateRegistration(id: "r1", replacing: .sameDevice, at: Self.t0)
        #expect(try await store.setPin(registrationId: "r1", userId: "u1", pinHash: "pin-hash", at: Self.t0))
    }

    @Test(arguments: engines)
    func concurrentPinAttemptsAreCountedBeforeTheyAreChecked(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await Self.withPinnedRegistration(store)
            // 20 racing attempts: exactly 3 get to check a PIN.
            let results = try await withThrowingTaskGroup(of: PinAttempt.self) { group in
                for _ in 0..<20 { group.addTask { try await store.beginPinAttempt(registrationId: "r1", maxAttempts: 3) } }
                return try await group.reduce(into: [PinAttempt]()) { $0.append($1) }
            }
            #expect(results.filter { $0 == .verify(hash: "pin-hash", userId: "u1") }.count == 3)
            #expect(results.filter { $0 == .disabled }.count == 17)
            #expect(try await store.recordWrongPin(registrationId: "r1", maxAttempts: 3, at: Self.t0))
            #expect(try await store.registration(id: "r1")?.pinDisabledAt != nil)
            // A password sign-in re-enables it; a right PIN then completes.
            #expect(try await store.reenablePins(userId: "u1") == ["r1"])
            #expect(try await store.beginPinAttempt(registrationId: "r1", maxAttempts: 3) == .verify(hash: "pin-hash", userId: "u1"))
            #expect(try await store.completePinSignIn(registrationId: "r1", session: StoreTests.session("t1", user: "u1", registration: "r1"), at: Self.t0))
            #expect(try await store.session(tokenHash: "t1") != nil)
        }
    }

    @Test(arguments: engines)
    func pinStatesAreReported(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            #expect(try await store.beginPinAttempt(registrationId: "none", maxAttempts: 3) == .noRegistration)
            try await Self.withPinnedRegistration(store)
            #expect(try await store.removePin(registrationId: "r1", userId: "u1"))
            #expect(try await store.removePin(registrationId: "r1", userId: "u1") == false)
            #expect(try await store.beginPinAttempt(registrationId: "r1", maxAttempts: 3) == .noPin)
            // Someone else's registration: nothing set.
            #expect(try await store.setPin(registrationId: "r1", userId: "u2", pinHash: "x", at: Self.t0) == false)
            // A PIN removed while being checked does not sign in.
            #expect(try await store.setPin(registrationId: "r1", userId: "u1", pinHash: "pin-hash", at: Self.t0))
            _ = try await store.beginPinAttempt(registrationId: "r1", maxAttempts: 3)
            _ = try await store.removePin(registrationId: "r1", userId: "u1")
            #expect(try await store.completePinSignIn(registrationId: "r1", session: StoreTests.session("t2", user: "u1", registration: "r1"), at: Self.t0) == false)
            #expect(try await store.session(tokenHash: "t2") == nil)
        }
    }

    @Test(arguments: engines)
    func rateLimitBucketsRefillAndAreSharedByEveryStoreOnTheDatabase(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let first = try await fixture.open()
            // A second store on the same database stands for a second instance (in-memory SQLite cannot share).
            let second = database.isPersistent ? try await fixture.open(migrate: false) : first
            #expect(try await first.takeRateLimitToken(key: "k", capacity: 2, interval: 10, at: Self.t0) == nil)
            #expect(try await second.takeRateLimitToken(key: "k", capacity: 2, interval: 10, at: Self.t0) == nil)
            #expect(try await first.takeRateLimitToken(key: "k", capacity: 2, interval: 10, at: Self.t0) == 10)
            #expect(try await second.takeRateLimitToken(key: "k", capacity: 2, interval: 10, at: Self.t0.addingTimeInterval(4)) == 6)
            #expect(try await second.takeRateLimitToken(key: "k", capacity: 2, interval: 10, at: Self.t0.addingTimeInterval(10)) == nil)
            #expect(try await first.takeRateLimitToken(key: "other", capacity: 2, interval: 10, at: Self.t0) == nil)
            // Concurrent takers on a fresh bucket: exactly `capacity` win.
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<10 {
                    let store = index.isMultiple(of: 2) ? first : second
                    group.addTask { try await store.takeRateLimitToken(key: "race", capacity: 4, interval: 60, at: Self.t0) == nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 4)
            // Purging drops full buckets only.
            _ = try await first.purgeExpired(before: Self.t0.addingTimeInterval(30))
            #expect(try await first.takeRateLimitToken(key: "race", capacity: 4, interval: 60, at: Self.t0.addingTimeInterval(30)) != nil)
            if database.isPersistent { try await second.shutdown() }
            try await first.shutdown()
        }
    }

    @Test(arguments: engines)
    func loginFailuresCountWithinTheWindow(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            #expect(try await store.loginFailures(key: "a") == nil)
            _ = try await store.recordLoginFailure(key: "a", window: 60, at: Self.t0)
            let second = try await store.recordLoginFailure(key: "a", window: 60, at: Self.t0.addingTimeInterval(30))
            #expect(second == LoginFailures(failures: 2, lastFailureAt: Self.t0.addingTimeInterval(30)))
            // More than the window after the last failure: the count starts again.
            let fresh = try await store.recordLoginFailure(key: "a", window: 60, at: Self.t0.addingTimeInterval(200))
            #expect(fresh.failures == 1)
            try await store.clearLoginFailures(key: "a")
            #expect(try await store.loginFailures(key: "a") == nil)
        }
    }

    @Test(arguments: engines)
    func auditEventsAreReadNewestFirstWithFiltersAndCursors(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            for index in 0..<7 {
                try await store.insertAuditEvent(
                    AuditEventRecord(
                        id: String(format: "%02d", index),
                        occurredAt: Self.t0.addingTimeInterval(TimeInterval(index / 2)),
                        type: index.isMultiple(of: 3) ? "password_login" : "biometric_login",
                        outcome: "success",
                        userId: index < 5 ? "u1" : "u2",
                        clientAddress: "192.0.2.1",
                        userAgent: "UA"
                    )
                )
            }
            let all = try await store.auditEvents(AuditEventQuery(limit: 100))
            #expect(all.map(\.id) == ["06", "05", "04", "03", "02", "01", "00"])
            let page = try await store.auditEvents(AuditEventQuery(after: AuditCursor(occurredAt: all[2].occurredAt, id: all[2].id), limit: 2))
            #expect(page.map(\.id) == ["03", "02"])
            #expect(try await store.auditEvents(AuditEventQuery(userId: "u2")).map(\.id) == ["06", "05"])
            #expect(try await store.auditEvents(AuditEventQuery(type: "password_login")).map(\.id) == ["06", "03", "00"])
            let window = AuditEventQuery(since: Self.t0.addingTimeInterval(1), until: Self.t0.addingTimeInterval(3), limit: 100, ascending: true)
            #expect(try await store.auditEvents(window).map(\.id) == ["02", "03", "04", "05"])
            #expect(all.first?.clientAddress == "192.0.2.1")
            // Retention: everything before the cutoff goes, nothing after.
            #expect(try await store.deleteAuditEvents(before: Self.t0.addingTimeInterval(2)) == 4)
            #expect(try await store.auditEvents(AuditEventQuery(limit: 100)).map(\.id) == ["06", "05", "04"])
        }
    }

    @Test(arguments: engines)
    func adminKeysUsersSessionsAndSettings(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertAdminKey(AdminKeyRecord(id: "k1", name: "ops", keyHash: "h1", createdAt: Self.t0))
            #expect(try await store.adminKey(keyHash: "h1")?.name == "ops")
            #expect(try await store.revokeAdminKey(id: "k1", at: Self.t0))
            #expect(try await store.adminKey(keyHash: "h1") == nil)
            #expect(try await store.adminKeys().first?.revokedAt != nil)

            for (index, email) in ["a%b@example.com", "axb@example.com", "c@example.org"].enumerated() {
                var user = StoreTests.user("u\(index)", email: email)
                user.createdAt = Self.t0.addingTimeInterval(TimeInterval(index))
                try await store.insertUser(user)
            }
            #expect(try await store.users(emailContaining: nil, afterId: nil, limit: 10).map(\.id) == ["u2", "u1", "u0"])
            #expect(try await store.users(emailContaining: nil, afterId: "u2", limit: 1).map(\.id) == ["u1"])
            #expect(try await store.users(emailContaining: "a%b", afterId: nil, limit: 10).map(\.id) == ["u0"])
            #expect(try await store.users(emailContaining: "example.com", afterId: nil, limit: 10).count == 2)

            try await store.insertSession(StoreTests.session("s1", user: "u0"))
            try await store.insertSession(StoreTests.session("s2", user: "u0"))
            try await store.insertSession(StoreTests.session("s3", user: "u0"))
            #expect(try await store.revokeSessions(userId: "u0", keeping: "s3", at: Self.t0) == 2)
            #expect(try await store.revokeSessions(userId: "u0", keeping: nil, at: Self.t0) == 1)
            #expect(try await store.revokeSessions(userId: "u0", keeping: nil, at: Self.t0) == 0)
            #expect(try await store.updatePassword(userId: "u0", passwordHash: "new-hash"))
            #expect(try await store.user(id: "u0")?.passwordHash == "new-hash")
            #expect(try await store.updatePassword(userId: "nobody", passwordHash: "x") == false)

            #expect(try await store.setting(name: "policy") == nil)
            try await store.saveSetting(name: "policy", value: "{}", at: Self.t0)
            try await store.saveSetting(name: "policy", value: "{\"a\":1}", at: Self.t0)
            #expect(try await store.setting(name: "policy") == "{\"a\":1}")
            // Insert-if-absent: the first value stays.
            #expect(try await store.insertSetting(name: "key", value: "first", at: Self.t0))
            #expect(try await store.insertSetting(name: "key", value: "second", at: Self.t0) == false)
            #expect(try await store.setting(name: "key") == "first")
        }
    }
}
