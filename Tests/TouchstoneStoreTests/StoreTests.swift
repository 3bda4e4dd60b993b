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

    // MARK: Completing sign-ins

    static func session(_ token: String, user: String, registration: String? = nil) -> SessionRecord {
        SessionRecord(
            tokenHash: token, userId: user, createdAt: t0, expiresAt: t0.addingTimeInterval(3600),
            idleExpiresAt: t0.addingTimeInterval(900), authenticatedAt: t0, strongAuthenticatedAt: nil,
            methods: registration == nil ? [.passkey] : [.biometric], registrationId: registration
        )
    }

    /// An answered sign-in challenge as the server records it (the challenge itself is not stored when issued).
    static func answered(_ value: String, registration: String = "a", keptUntil: Date = t0.addingTimeInterval(360)) -> ChallengeRecord {
        ChallengeRecord(challenge: value, registrationId: registration, purpose: .authentication, createdAt: t0, expiresAt: keptUntil)
    }

    @Test(arguments: engines)
    func aSignInCompletesOncePerChallengeAndOnlyThenWrites(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "c")?.challengeUsed == false)

            let later = Self.t0.addingTimeInterval(5)
            let outcomes = try await withThrowingTaskGroup(of: UserRecord?.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await store.completeSignIn(
                            challenge: Self.answered("c"), session: Self.session("t\(index)", user: "u1", registration: "a"), at: later
                        )
                    }
                }
                return try await group.reduce(into: [UserRecord?]()) { $0.append($1) }
            }
            #expect(outcomes.compactMap { $0 } == [Self.user("u1")])
            let stored = try await (0..<6).asyncCompactMap { try await store.session(tokenHash: "t\($0)") }
            #expect(stored.count == 1)
            #expect(stored.first?.registrationId == "a")
            #expect(try await store.registration(id: "a")?.lastUsedAt == later)
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "c")?.challengeUsed == true)
            // Recorded as answered, consumed at the completion, kept until the record's expiry (then purged).
            #expect(try await store.purgeExpired(before: Self.t0.addingTimeInterval(360)).challenges == 0)
            #expect(try await store.purgeExpired(before: Self.t0.addingTimeInterval(361)).challenges == 1)
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "c")?.challengeUsed == false)

            // A challenge recorded by a failed attempt cannot complete a sign-in, nor be recorded twice; of several
            // failed attempts racing, one records it.
            let recorded = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { try await store.recordAnsweredChallenge(Self.answered("d"), at: Self.t0) } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(recorded.filter { $0 }.count == 1)
            #expect(try await store.completeSignIn(challenge: Self.answered("d"), session: Self.session("late", user: "u1", registration: "a"), at: Self.t0) == nil)
            #expect(try await store.session(tokenHash: "late") == nil)
            // Nothing is recorded for a registration that does not exist.
            #expect(try await !store.recordAnsweredChallenge(Self.answered("e", registration: "missing"), at: Self.t0))
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "e")?.challengeUsed == false)
        }
    }

    @Test(arguments: engines)
    func aSignInStartReadsTheRegistrationsStatusUserAndKey(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            // Pending, then active, then revoked; and no registration at all. Nothing is written.
            #expect(try await store.signInRegistration(id: "a")?.status == .pending)
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            let active = try #require(try await store.signInRegistration(id: "a"))
            let registration = try #require(try await store.registration(id: "a"))
            #expect(active == SignInRegistrationRecord(id: "a", userId: "u1", status: .active, algorithm: registration.algorithm, publicKey: registration.publicKey))
            _ = try await store.updateRegistrationStatus(id: "a", from: [.active], to: .revoked, at: Self.t0)
            #expect(try await store.signInRegistration(id: "a")?.status == .revoked)
            #expect(try await store.signInRegistration(id: "missing") == nil)
            #expect(try await store.purgeExpired(before: Self.t0.addingTimeInterval(86_400)).challenges == 0)
        }
    }

    /// A registration row whose status no build writes (a damaged or hand-edited row) is a store error when a sign-in
    /// starts, never a challenge.
    @Test(arguments: engines.filter(\.isPersistent))
    func aDamagedRegistrationStatusIssuesNoChallenge(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            let executor = try await fixture.openExecutor()
            try await executor.withDatabase { db in
                try await db.raw("UPDATE registrations SET status = 'bogus' WHERE id = 'a'").run()
            }
            try await executor.shutdown()
            await #expect(throws: StoreError.self) { try await store.signInRegistration(id: "a") }
            try await store.shutdown()
        }
    }

    /// A verified signature completes a sign-in only while everything else holds, checked in the same write: the
    /// challenge not answered before (whatever it was stored for); the registration active and the session's user's.
    /// When any fails, nothing is written: no record of the challenge, no session, no use recorded.
    @Test(arguments: engines)
    func aSignInCompletesOnlyWhileItsChallengeRegistrationAndUserHold(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertUser(Self.user("u2"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            try await store.insertRegistration(Self.registration("p", user: "u1", device: "d2"))
            // An enrolment's challenge stored under the same value.
            try await store.insertChallenge(
                ChallengeRecord(challenge: "r", registrationId: "a", purpose: .registration, createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(60))
            )
            var tokens = 0
            func attempt(_ challenge: String, registration: String = "a", user: String = "u1") async throws -> UserRecord? {
                tokens += 1
                return try await store.completeSignIn(
                    challenge: Self.answered(challenge, registration: registration),
                    session: Self.session("t\(tokens)", user: user, registration: registration), at: Self.t0
                )
            }
            // A value stored already, another registration, another user.
            #expect(try await attempt("r") == nil)
            #expect(try await attempt("c", registration: "b") == nil)
            #expect(try await attempt("c", user: "u2") == nil)
            // A pending registration signs nothing in.
            #expect(try await attempt("c", registration: "p") == nil)
            // Locked, then revoked.
            #expect(try await store.recordFailedSignature(registrationId: "a", threshold: 1, at: Self.t0))
            #expect(try await attempt("c") == nil)
            #expect(try await store.unlockRegistration(id: "a", at: Self.t0))
            #expect(try await store.updateRegistrationStatus(id: "a", from: [.active], to: .revoked, at: Self.t0))
            #expect(try await attempt("c") == nil)
            for token in 1...tokens { #expect(try await store.session(tokenHash: "t\(token)") == nil) }
            #expect(try await store.registration(id: "a")?.lastUsedAt == nil)
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "c")?.challengeUsed == false)
            // Active again (a test-only path: nothing in the server reactivates a revoked registration): it completes.
            #expect(try await store.updateRegistrationStatus(id: "a", from: [.revoked], to: .active, at: Self.t0))
            #expect(try await attempt("c") == Self.user("u1"))
            #expect(try await store.session(tokenHash: "t\(tokens)")?.userId == "u1")
        }
    }

    @Test(arguments: engines)
    func aCompletedSignInWritesItsSessionEventsAndUseTogetherAndALostOneWritesNothing(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            try await store.insertPasskey(Self.passkey("p", user: "u1"))
            #expect(try await !store.recordFailedSignature(registrationId: "a", threshold: 5, at: Self.t0))
            #expect(try await !store.recordFailedPasskeyAssertion(id: "p", threshold: 5, at: Self.t0))
            #expect(try await store.registration(id: "a")?.failedAttempts == 1)
            #expect(try await store.passkey(id: "p")?.failedAttempts == 1)
            let later = Self.t0.addingTimeInterval(7)
            func event(_ id: String, _ type: String, passkey: String? = nil) -> AuditEventRecord {
                AuditEventRecord(
                    id: id, occurredAt: later, type: type, outcome: "success", userId: "u1",
                    registrationId: passkey == nil ? "a" : nil, passkeyId: passkey, clientAddress: nil, userAgent: "UA"
                )
            }
            var session = Self.session("t1", user: "u1", registration: "a")
            session.strongAuthenticatedAt = Self.t0
            #expect(try await store.completeSignIn(challenge: Self.answered("c"), session: session, events: [event("e1", "biometric_login")], at: later) == Self.user("u1"))
            #expect(try await store.session(tokenHash: "t1") == session)
            let registration = try #require(try await store.registration(id: "a"))
            #expect(registration.lastUsedAt == later && registration.failedAttempts == 0)
            // The challenge is spent: a second completion writes nothing at all.
            #expect(try await store.completeSignIn(challenge: Self.answered("c"), session: Self.session("t2", user: "u1", registration: "a"), events: [event("e2", "biometric_login")], at: later) == nil)
            #expect(try await store.session(tokenHash: "t2") == nil)

            let events = [event("e3", "passkey_login", passkey: "p"), event("e4", "clone_warning", passkey: "p")]
            #expect(try await store.completePasskeySignIn(
                challenge: Self.answeredWebAuthn("w"), passkeyId: "p", signCount: 3, backupEligible: true, backedUp: false, cloneWarning: true, session: Self.session("t3", user: "u1"), events: events, at: later
            ))
            let passkey = try #require(try await store.passkey(id: "p"))
            #expect(passkey.signCount == 3 && passkey.cloneWarnings == 1 && passkey.failedAttempts == 0 && passkey.lastUsedAt == later)
            #expect(try await !store.completePasskeySignIn(
                challenge: Self.answeredWebAuthn("w"), passkeyId: "p", signCount: 9, backupEligible: true, backedUp: false, cloneWarning: true, session: Self.session("t4", user: "u1"), events: [event("e5", "passkey_login", passkey: "p")], at: later
            ))
            #expect(try await store.session(tokenHash: "t4") == nil)
            #expect(try await store.passkey(id: "p")?.signCount == 3)
            let written = try await store.auditEvents(AuditEventQuery(userId: "u1", ascending: true))
            #expect(written.sorted { $0.id < $1.id } == [event("e1", "biometric_login")] + events)
        }
    }

    @Test(arguments: engines)
    func aSignInAttemptReadsTheRegistrationItsUserAndTheChallengeAsTheSingleReadsDo(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            var owner = Self.user("u1")
            owner.displayName = "Ada"
            try await store.insertUser(owner)
            #expect(try await store.setRequireDeviceBoundPasskeys(userId: "u1", required: true))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            try await store.insertRegistration(Self.registration("b", user: "u1", device: "d2"))
            let user = try #require(try await store.user(id: "u1"))
            #expect(user.requireDeviceBoundPasskeys && user.displayName == "Ada")
            let registration = try #require(try await store.registration(id: "a"))

            let attempt = try #require(try await store.signInAttempt(registrationId: "a", challenge: "c"))
            #expect(attempt == SignInAttemptRecord(registration: registration, user: user, challengeUsed: false))
            // Any stored challenge with the value counts as answered (whichever registration it was recorded for: values
            // are random and bound by their MAC); the registration is found without it.
            #expect(try await store.recordAnsweredChallenge(Self.answered("c", registration: "b"), at: Self.t0))
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "c") == SignInAttemptRecord(registration: registration, user: user, challengeUsed: true))
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "x")?.challengeUsed == false)
            #expect(try await store.signInAttempt(registrationId: "missing", challenge: "c") == nil)
        }
    }

    /// An answered passkey sign-in challenge as the server records it (it is not stored when issued).
    static func answeredWebAuthn(_ value: String, keptUntil: Date = t0.addingTimeInterval(360)) -> WebAuthnChallengeRecord {
        WebAuthnChallengeRecord(challenge: value, purpose: .authentication, userId: nil, allowCredentials: [], createdAt: t0, expiresAt: keptUntil)
    }

    @Test(arguments: engines)
    func aPasskeyIsReadWithItsOwnerAndWhetherTheChallengeWasAnswered(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertPasskey(Self.passkey("p1", user: "u1"))
            let found = try #require(try await store.passkeySignInAttempt(credentialId: "cred-p1", challenge: "wa"))
            #expect(found.passkey == (try await store.passkey(credentialId: "cred-p1")))
            #expect(found.user == (try await store.user(id: "u1")))
            #expect(!found.challengeUsed)
            #expect(try await store.passkeySignInAttempt(credentialId: "cred-other", challenge: "wa") == nil)
            // Any stored WebAuthn challenge with the value counts (an enrolment's included: values are random).
            try await store.insertWebAuthnChallenge(
                WebAuthnChallengeRecord(
                    challenge: "reg", purpose: .registration, userId: "u1", allowCredentials: [], createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(60)
                )
            )
            #expect(try await store.passkeySignInAttempt(credentialId: "cred-p1", challenge: "reg")?.challengeUsed == true)
            // Of several failed attempts with one challenge, one records it; then it counts as answered.
            let recorded = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { try await store.recordAnsweredWebAuthnChallenge(Self.answeredWebAuthn("wa"), at: Self.t0) } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(recorded.filter { $0 }.count == 1)
            #expect(try await store.passkeySignInAttempt(credentialId: "cred-p1", challenge: "wa")?.challengeUsed == true)
            #expect(try await !store.completePasskeySignIn(
                challenge: Self.answeredWebAuthn("wa"), passkeyId: "p1", signCount: 1, backupEligible: true, backedUp: false, cloneWarning: false,
                session: Self.session("late", user: "u1"), at: Self.t0
            ))
            #expect(try await store.session(tokenHash: "late") == nil)
            // Kept until the record's expiry, then purged.
            #expect(try await store.purgeExpired(before: Self.t0.addingTimeInterval(360)).challenges == 1)  // the enrolment's
            #expect(try await store.purgeExpired(before: Self.t0.addingTimeInterval(361)).challenges == 1)
            #expect(try await store.passkeySignInAttempt(credentialId: "cred-p1", challenge: "wa")?.challengeUsed == false)
        }
    }

    @Test(arguments: engines)
    func aPasskeySignInCompletesOncePerChallengeAndOnlyThenWrites(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertPasskey(Self.passkey("p", user: "u1"))
            // Each task reports its own index: the group yields results in completion order, not in task order.
            let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let won = try await store.completePasskeySignIn(
                            challenge: Self.answeredWebAuthn("wa"), passkeyId: "p", signCount: Int64(10 + index), backupEligible: true, backedUp: true,
                            cloneWarning: false, session: Self.session("s\(index)", user: "u1"), at: Self.t0
                        )
                        return (index, won)
                    }
                }
                return try await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            let winners = outcomes.filter(\.value).map(\.key)
            #expect(winners.count == 1)
            let stored = try await (0..<6).asyncCompactMap { try await store.session(tokenHash: "s\($0)") }
            #expect(stored.count == 1)
            #expect(stored.first?.tokenHash == "s\(winners.first ?? -1)")
            // Only the winner recorded the passkey's use: its counter, and nobody else's.
            let winner = try #require(winners.first)
            let passkey = try #require(try await store.passkey(id: "p"))
            #expect(passkey.signCount == Int64(10 + winner))
            #expect(passkey.backedUp)
            #expect(passkey.lastUsedAt == Self.t0)
            #expect(try await store.passkeySignInAttempt(credentialId: "cred-p", challenge: "wa")?.challengeUsed == true)
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

extension Sequence where Element: Sendable {
    /// The non-nil results of `transform`, one element at a time, in order.
    fileprivate func asyncCompactMap<T>(_ transform: (Element) async throws -> T?) async rethrows -> [T] {
        var results: [T] = []
        for element in self {
            if let value = try await transform(element) { results.append(value) }
        }
        return results
    }
}
