import Foundation
import Logging
import SQLKit
import Testing
import TouchstoneStore

/// The store's semantics, run on every engine: SQLite (in memory and in a file) always, PostgreSQL when
/// `TOUCHSTONE_TEST_POSTGRES_URL` is set.
struct StoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let engines = TestDatabase.available

    static func withStore(_ database: TestDatabase, _ body: (SQLTouchstoneStore) async throws -> Void) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            do {
                try await body(store)
            } catch {
                try await store.shutdown()
                throw error
            }
            try await store.shutdown()
        }
    }

    static func user(_ id: String, email: String? = nil) -> UserRecord {
        UserRecord(id: id, email: email ?? "\(id)@example.com", displayName: nil, passwordHash: "hash", createdAt: t0)
    }

    static func registration(_ id: String, user: String, device: String, at offset: TimeInterval = 0) -> RegistrationRecord {
        RegistrationRecord(
            id: id,
            userId: user,
            deviceId: device,
            deviceName: "Phone",
            algorithm: "ES256",
            publicKey: [1, 2, 3, 250, 251],
            keyFingerprint: "fp-\(id)",
            status: .pending,
            createdAt: t0.addingTimeInterval(offset)
        )
    }

    @Test(arguments: engines.filter(\.isPersistent))
    func migrationsAreIdempotent(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            try await store.migrate()
            try await store.insertUser(Self.user("u1"))
            try await store.shutdown()
            let reopened = try await fixture.open()
            #expect(try await reopened.user(id: "u1")?.email == "u1@example.com")
            try await reopened.shutdown()
        }
    }

    /// Instances starting together migrate one at a time (PostgreSQL's advisory lock). SQLite is one writer per file and
    /// one executor per process, so the in-process race does not apply to it.
    @Test(arguments: engines.filter(\.isPostgres))
    func concurrentMigrationsApplyOnce(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let stores = try await withThrowingTaskGroup(of: SQLTouchstoneStore.self) { group in
                for _ in 0..<4 { group.addTask { try await fixture.open() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for store in stores { try await store.shutdown() }
            let store = try await fixture.open(migrate: false)
            try await store.insertUser(Self.user("after"))
            try await store.shutdown()
        }
    }

    @Test(arguments: engines.filter(\.isPersistent))
    func refusesADatabaseFromANewerBuild(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            try await store.shutdown()
            let executor = try await fixture.openExecutor()
            try await executor.withDatabase { db in
                try await db.raw("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)").run()
            }
            let newer = SQLTouchstoneStore(executor: executor)
            await #expect(throws: StoreError.self) { try await newer.migrate() }
            try await newer.shutdown()
        }
    }

    @Test(arguments: engines)
    func duplicateEmailIsAConflict(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1", email: "same@example.com"))
            await #expect(throws: StoreError.conflict) { try await store.insertUser(Self.user("u2", email: "same@example.com")) }
            #expect(try await store.user(email: "same@example.com")?.id == "u1")
        }
    }

    @Test(arguments: engines)
    func sessionsRoundTripAndRevokeOnce(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            let session = SessionRecord(
                tokenHash: "h1",
                userId: "u1",
                createdAt: Self.t0,
                expiresAt: Self.t0.addingTimeInterval(3600),
                idleExpiresAt: Self.t0.addingTimeInterval(900),
                authenticatedAt: Self.t0,
                strongAuthenticatedAt: Self.t0,
                methods: [.password],
                clientAddress: "203.0.113.7",
                userAgent: "Mozilla/5.0 (Android 15) \u{1F600}",
                lastSeenAt: Self.t0
            )
            try await store.insertSession(session)
            #expect(try await store.session(tokenHash: "h1") == session)
            try await store.updateSessionIdleExpiry(tokenHash: "h1", idleExpiresAt: Self.t0.addingTimeInterval(1000), lastSeenAt: Self.t0.addingTimeInterval(100))
            #expect(try await store.session(tokenHash: "h1")?.idleExpiresAt == Self.t0.addingTimeInterval(1000))
            #expect(try await store.session(tokenHash: "h1")?.lastSeenAt == Self.t0.addingTimeInterval(100))
            #expect(try await store.revokeSession(tokenHash: "h1", at: Self.t0))
            #expect(try await !store.revokeSession(tokenHash: "h1", at: Self.t0))
            #expect(try await store.session(tokenHash: "h1")?.revokedAt == Self.t0)
        }
    }

    @Test(arguments: engines)
    func registrationRoundTripsAndListsNewestFirstWithoutPending(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("r1", user: "u1", device: "d1", at: 0))
            try await store.insertRegistration(Self.registration("r2", user: "u1", device: "d2", at: 10))
            try await store.insertRegistration(Self.registration("r3", user: "u1", device: "d3", at: 20))
            _ = try await store.activateRegistration(id: "r1", replacing: .sameDevice, at: Self.t0)
            _ = try await store.activateRegistration(id: "r2", replacing: .sameDevice, at: Self.t0)
            let listed = try await store.registrations(userId: "u1")
            #expect(listed.map(\.id) == ["r2", "r1"])
            #expect(listed[0].publicKey == [1, 2, 3, 250, 251])
            #expect(try await store.latestRegistration(keyFingerprint: "fp-r3") == nil)  // pending
            #expect(try await store.latestRegistration(keyFingerprint: "fp-r1")?.id == "r1")
        }
    }

    @Test(arguments: engines)
    func activationReplacesSameDeviceOnlyInMultiDeviceScope(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            for (id, device, offset) in [("a", "d1", 0.0), ("b", "d2", 1.0), ("c", "d1", 2.0)] {
                try await store.insertRegistration(Self.registration(id, user: "u1", device: device, at: offset))
            }
            #expect(try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0) == [])
            #expect(try await store.activateRegistration(id: "b", replacing: .sameDevice, at: Self.t0) == [])
            #expect(try await store.activateRegistration(id: "c", replacing: .sameDevice, at: Self.t0) == ["a"])
            #expect(try await store.registration(id: "a")?.status == .replaced)
            #expect(try await store.registration(id: "b")?.status == .active)
            #expect(try await store.activeRegistration(deviceId: "d1")?.id == "c")
        }
    }

    @Test(arguments: engines)
    func activationReplacesEveryDeviceInSingleDeviceScope(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            for (id, device) in [("a", "d1"), ("b", "d2"), ("c", "d3")] {
                try await store.insertRegistration(Self.registration(id, user: "u1", device: device))
            }
            _ = try await store.activateRegistration(id: "a", replacing: .allOfUser, at: Self.t0)
            _ = try await store.activateRegistration(id: "b", replacing: .sameDevice, at: Self.t0)
            let replaced = try await store.activateRegistration(id: "c", replacing: .allOfUser, at: Self.t0)
            #expect(Set(replaced) == ["a", "b"])
            #expect(try await store.registrations(userId: "u1").filter { $0.status == .active }.map(\.id) == ["c"])
        }
    }

    @Test(arguments: engines)
    func oneAccountPerDeviceIsEnforcedAtActivation(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertUser(Self.user("u2"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "shared"))
            try await store.insertRegistration(Self.registration("b", user: "u2", device: "shared"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            await #expect(throws: StoreError.conflict) {
                try await store.activateRegistration(id: "b", replacing: .allOfUser, at: Self.t0)
            }
            #expect(try await store.registration(id: "b")?.status == .pending)
            #expect(try await store.registration(id: "a")?.status == .active)
        }
    }

    @Test(arguments: engines)
    func activatingANonPendingRegistrationIsNotFound(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            await #expect(throws: StoreError.notFound) { try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0) }
            await #expect(throws: StoreError.notFound) { try await store.activateRegistration(id: "zz", replacing: .sameDevice, at: Self.t0) }
        }
    }

    @Test(arguments: engines)
    func statusChangesOnlyFromAllowedStatuses(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d"))
            #expect(try await !store.updateRegistrationStatus(id: "a", from: [.active], to: .revoked, at: Self.t0))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            #expect(try await store.updateRegistrationStatus(id: "a", from: [.active, .replaced], to: .revoked, at: Self.t0))
            #expect(try await store.registration(id: "a")?.status == .revoked)
        }
    }

    @Test(arguments: engines)
    func latestRegistrationChallengeIsConsumedOnce(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            for (value, offset) in [("old", 0.0), ("new", 5.0)] {
                try await store.insertChallenge(
                    ChallengeRecord(
                        challenge: value,
                        registrationId: "a",
                        purpose: .registration,
                        createdAt: Self.t0.addingTimeInterval(offset),
                        expiresAt: Self.t0.addingTimeInterval(100)
                    )
                )
            }
            #expect(try await store.consumeLatestChallenge(registrationId: "a", purpose: .registration, at: Self.t0)?.challenge == "new")
            #expect(try await store.consumeLatestChallenge(registrationId: "a", purpose: .authentication, at: Self.t0) == nil)
        }
    }

    @Test(arguments: engines)
    func concurrentConsumersGetTheChallengeExactlyOnce(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            try await store.insertChallenge(
                ChallengeRecord(challenge: "race", registrationId: "a", purpose: .registration, createdAt: Self.t0, expiresAt: Self.t0)
            )
            let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await store.consumeLatestChallenge(registrationId: "a", purpose: .registration, at: Self.t0) != nil
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(winners == 1)
        }
    }

    /// Every instance runs the purge; simultaneous purges must neither fail nor double-count.
    @Test(arguments: engines)
    func concurrentPurgesDoNotConflict(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("r", user: "u1", device: "d"))
            for index in 0..<40 {
                try await store.insertChallenge(
                    ChallengeRecord(
                        challenge: "c\(index)", registrationId: "r", purpose: .authentication,
                        createdAt: Self.t0.addingTimeInterval(-100), expiresAt: Self.t0.addingTimeInterval(-1)
                    )
                )
            }
            let removed = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await store.purgeExpired(before: Self.t0).challenges } }
                return try await group.reduce(0, +)
            }
            #expect(removed == 40)
        }
    }

    @Test(arguments: engines)
    func purgeRemovesOnlyWhatEnded(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("old-pending", user: "u1", device: "d1", at: -1000))
            try await store.insertRegistration(Self.registration("kept", user: "u1", device: "d2", at: -1000))
            // An enrolment in progress: started long ago, but its challenge is still answerable.
            try await store.insertRegistration(Self.registration("in-progress", user: "u1", device: "d3", at: -1000))
            try await store.insertChallenge(
                ChallengeRecord(
                    challenge: "enrol", registrationId: "in-progress", purpose: .registration, createdAt: Self.t0,
                    expiresAt: Self.t0.addingTimeInterval(30)
                )
            )
            _ = try await store.activateRegistration(id: "kept", replacing: .sameDevice, at: Self.t0)
            try await store.insertChallenge(
                ChallengeRecord(challenge: "expired", registrationId: "kept", purpose: .authentication, createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(-1))
            )
            try await store.insertChallenge(
                ChallengeRecord(challenge: "live", registrationId: "kept", purpose: .authentication, createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(60))
            )
            for (hash, expiry) in [("ended", -1.0), ("alive", 600.0)] {
                try await store.insertSession(
                    SessionRecord(
                        tokenHash: hash, userId: "u1", createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(expiry),
                        idleExpiresAt: Self.t0.addingTimeInterval(expiry), authenticatedAt: Self.t0, strongAuthenticatedAt: nil,
                        methods: [.biometric]
                    )
                )
            }
            let result = try await store.purgeExpired(before: Self.t0)
            #expect(result == PurgeResult(challenges: 1, sessions: 1, pendingRegistrations: 1))
            #expect(try await store.registration(id: "old-pending") == nil)
            #expect(try await store.registration(id: "kept") != nil)
            #expect(try await store.registration(id: "in-progress")?.status == .pending)
            #expect(try await store.session(tokenHash: "alive") != nil)
            #expect(try await store.signInAttempt(registrationId: "kept", challenge: "live")?.challengeUsed == true)
            #expect(try await store.signInAttempt(registrationId: "kept", challenge: "expired")?.challengeUsed == false)
        }
    }

    // MARK: Passkeys

    static func passkey(_ id: String, user: String, credential: String? = nil, at offset: TimeInterval = 0) -> PasskeyRecord {
        PasskeyRecord(
            id: id, credentialId: credential ?? "cred-\(id)", userId: user, name: "Key \(id)", publicKey: [0xA5, 1, 2],
            algorithm: -7, signCount: 0, aaguid: "00000000-0000-0000-0000-000000000000", backupEligible: true,
            backedUp: false, attestationFormat: "none", attestationType: "none", createdAt: t0.addingTimeInterval(offset)
        )
    }

    @Test(arguments: engines)
    func passkeysRoundTripAndAreScopedToTheirOwner(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertUser(Self.user("u2"))
            try await store.insertPasskey(Self.passkey("p1", user: "u1", at: 0))
            try await store.insertPasskey(Self.passkey("p2", user: "u1", at: 5))
            await #expect(throws: StoreError.conflict) {
                try await store.insertPasskey(Self.passkey("p3", user: "u2", credential: "cred-p1"))
            }
            #expect(try await store.passkeys(userId: "u1").map(\.id) == ["p2", "p1"])
            #expect(try await store.passkey(credentialId: "cred-p2") == Self.passkey("p2", user: "u1", at: 5))
            #expect(try await !store.renamePasskey(id: "p1", userId: "u2", name: "stolen"))
            #expect(try await store.renamePasskey(id: "p1", userId: "u1", name: "Laptop"))
            #expect(try await store.passkey(id: "p1")?.name == "Laptop")
            #expect(try await !store.deletePasskey(id: "p1", userId: "u2"))
            #expect(try await store.deletePasskey(id: "p1", userId: "u1"))
            #expect(try await store.passkey(id: "p1") == nil)
        }
    }

    @Test(arguments: engines)
    func passkeyCountersOnlyGrowUnderConcurrency(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertPasskey(Self.passkey("p", user: "u1"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for count in [5, 50, 7, 49, 3] as [Int64] {
                    group.addTask {
                        try await store.recordPasskeyUse(id: "p", signCount: count, backupEligible: true, backedUp: true, cloneWarning: count < 10, at: Self.t0)
                    }
                }
                try await group.waitForAll()
            }
            let passkey = try #require(try await store.passkey(id: "p"))
            #expect(passkey.signCount == 50)
            #expect(passkey.cloneWarnings == 3)
            #expect(passkey.backedUp)
            #expect(passkey.lastUsedAt == Self.t0)
        }
    }

    @Test(arguments: engines)
    func webAuthnChallengesAreSingleUseAndBoundToTheirPurpose(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            let record = WebAuthnChallengeRecord(
                challenge: "wa", purpose: .authentication, userId: "u1", allowCredentials: ["a", "b"], createdAt: Self.t0,
                expiresAt: Self.t0.addingTimeInterval(60)
            )
            try await store.insertWebAuthnChallenge(record)
            #expect(try await store.consumeWebAuthnChallenge("wa", purpose: .registration, at: Self.t0) == nil)
            #expect(try await store.consumeWebAuthnChallenge("wa", purpose: .authentication, at: Self.t0) == record)
            #expect(try await store.consumeWebAuthnChallenge("wa", purpose: .authentication, at: Self.t0) == nil)
            try await store.insertWebAuthnChallenge(
                WebAuthnChallengeRecord(
                    challenge: "old", purpose: .registration, userId: nil, allowCredentials: [], createdAt: Self.t0,
                    expiresAt: Self.t0.addingTimeInterval(-1)
                )
            )
            #expect(try await store.purgeExpired(before: Self.t0).challenges == 1)
            #expect(try await store.consumeWebAuthnChallenge("old", purpose: .registration, at: Self.t0) == nil)
        }
    }
}

extension StoreTests {
    /// Every write is answered after its commit, so a read that starts after the answer sees it — also on SQLite's
    /// read connections while other reads run on them (a connection shared by overlapping statements would read an
    /// older snapshot).
    @Test(arguments: engines)
    func aReadAfterAnAnsweredWriteSeesIt(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            let missing = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<400 {
                    group.addTask {
                        // Background reads keep the read connections busy with overlapping statements.
                        _ = try await store.user(id: "u1")
                        try await store.insertSession(Self.session("rw\(index)", user: "u1"))
                        let seen = try await store.session(tokenHash: "rw\(index)") != nil
                        _ = try await store.registrations(userId: "u1")
                        return seen ? 0 : 1
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(missing == 0)
        }
    }
}
