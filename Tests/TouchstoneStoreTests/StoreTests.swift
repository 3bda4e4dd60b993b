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
                passwordAuthenticatedAt: Self.t0,
                methods: [.password]
            )
            try await store.insertSession(session)
            #expect(try await store.session(tokenHash: "h1") == session)
            try await store.updateSessionIdleExpiry(tokenHash: "h1", idleExpiresAt: Self.t0.addingTimeInterval(1000))
            #expect(try await store.session(tokenHash: "h1")?.idleExpiresAt == Self.t0.addingTimeInterval(1000))
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
    func challengeIsBoundToRegistrationAndPurpose(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            try await store.insertRegistration(Self.registration("b", user: "u1", device: "d2"))
            try await store.insertChallenge(
                ChallengeRecord(challenge: "c1", registrationId: "a", purpose: .authentication, createdAt: Self.t0, expiresAt: Self.t0)
            )
            #expect(try await store.consumeChallenge("c1", registrationId: "b", purpose: .authentication, at: Self.t0) == nil)
            #expect(try await store.consumeChallenge("c1", registrationId: "a", purpose: .registration, at: Self.t0) == nil)
            #expect(try await store.consumeChallenge("c1", registrationId: "a", purpose: .authentication, at: Self.t0)?.challenge == "c1")
            #expect(try await store.consumeChallenge("c1", registrationId: "a", purpose: .authentication, at: Self.t0) == nil)
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
                ChallengeRecord(challenge: "race", registrationId: "a", purpose: .authentication, createdAt: Self.t0, expiresAt: Self.t0)
            )
            let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await store.consumeChallenge("race", registrationId: "a", purpose: .authentication, at: Self.t0) != nil
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
                        idleExpiresAt: Self.t0.addingTimeInterval(expiry), authenticatedAt: Self.t0, passwordAuthenticatedAt: nil,
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
            #expect(try await store.consumeChallenge("live", registrationId: "kept", purpose: .authentication, at: Self.t0) != nil)
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
                        try await store.recordPasskeyUse(id: "p", signCount: count, backedUp: true, cloneWarning: count < 10, at: Self.t0)
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
            idleExpiresAt: t0.addingTimeInterval(900), authenticatedAt: t0, passwordAuthenticatedAt: nil,
            methods: registration == nil ? [.passkey] : [.biometric], registrationId: registration
        )
    }

    @Test(arguments: engines)
    func aSignInCompletesOncePerChallengeAndOnlyThenWrites(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            let issued = ChallengeRecord(
                challenge: "c", registrationId: "a", purpose: .authentication, createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(60)
            )
            try await store.insertChallenge(issued)
            // Looking does not consume, and is bound to the registration and purpose.
            #expect(try await store.unconsumedChallenge("c", registrationId: "a", purpose: .authentication) == issued)
            #expect(try await store.unconsumedChallenge("c", registrationId: "a", purpose: .registration) == nil)
            #expect(try await store.unconsumedChallenge("c", registrationId: "b", purpose: .authentication) == nil)

            let later = Self.t0.addingTimeInterval(5)
            let outcomes = try await withThrowingTaskGroup(of: UserRecord?.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await store.completeSignIn(
                            challenge: "c", registrationId: "a", session: Self.session("t\(index)", user: "u1", registration: "a"), at: later
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
            #expect(try await store.unconsumedChallenge("c", registrationId: "a", purpose: .authentication) == nil)
            // A challenge consumed by a failed attempt cannot complete a sign-in.
            try await store.insertChallenge(
                ChallengeRecord(challenge: "d", registrationId: "a", purpose: .authentication, createdAt: Self.t0, expiresAt: Self.t0)
            )
            #expect(try await store.consumeChallenge("d", registrationId: "a", purpose: .authentication, at: Self.t0) != nil)
            #expect(try await store.completeSignIn(challenge: "d", registrationId: "a", session: Self.session("late", user: "u1", registration: "a"), at: Self.t0) == nil)
            #expect(try await store.session(tokenHash: "late") == nil)
        }
    }

    @Test(arguments: engines)
    func aChallengeIsIssuedOnlyForAnActiveRegistration(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            func challenge(_ value: String, for registration: String) -> ChallengeRecord {
                ChallengeRecord(
                    challenge: value, registrationId: registration, purpose: .authentication, createdAt: Self.t0,
                    expiresAt: Self.t0.addingTimeInterval(60)
                )
            }
            // Pending, then active, then revoked; and no registration at all.
            // Each case twice: with the status only, and with the registration's user and key (read in the same call).
            #expect(try await store.insertChallengeIfActive(challenge("c1", for: "a")) == .pending)
            #expect(try await store.insertChallengeReadingSigner(challenge("s1", for: "a"))?.status == .pending)
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            #expect(try await store.insertChallengeIfActive(challenge("c2", for: "a")) == .active)
            let active = try #require(try await store.insertChallengeReadingSigner(challenge("s2", for: "a")))
            let registration = try #require(try await store.registration(id: "a"))
            #expect(active == SignInRegistrationRecord(id: "a", userId: "u1", status: .active, algorithm: registration.algorithm, publicKey: registration.publicKey))
            _ = try await store.updateRegistrationStatus(id: "a", from: [.active], to: .revoked, at: Self.t0)
            #expect(try await store.insertChallengeIfActive(challenge("c3", for: "a")) == .revoked)
            #expect(try await store.insertChallengeReadingSigner(challenge("s3", for: "a"))?.status == .revoked)
            #expect(try await store.insertChallengeIfActive(challenge("c4", for: "missing")) == nil)
            #expect(try await store.insertChallengeReadingSigner(challenge("s4", for: "missing")) == nil)
            let stored = try await ["c1", "c2", "c3", "c4", "s1", "s2", "s3", "s4"].asyncCompactMap {
                try await store.unconsumedChallenge($0, registrationId: "a", purpose: .authentication)?.challenge
            }
            #expect(stored == ["c2", "s2"])
        }
    }

    /// A registration row whose status no build writes (a damaged or hand-edited row) is a store error when a sign-in
    /// starts, never a challenge; on PostgreSQL the check and the insert are one statement.
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
            let challenge = ChallengeRecord(
                challenge: "c1", registrationId: "a", purpose: .authentication, createdAt: Self.t0,
                expiresAt: Self.t0.addingTimeInterval(60)
            )
            await #expect(throws: StoreError.self) { try await store.insertChallengeIfActive(challenge) }
            await #expect(throws: StoreError.self) { try await store.insertChallengeReadingSigner(challenge) }
            #expect(try await store.unconsumedChallenge("c1", registrationId: "a", purpose: .authentication) == nil)
            try await store.shutdown()
        }
    }

    /// A verified signature completes a sign-in only while everything else holds, checked in the same write: the
    /// challenge unexpired, bound to the registration and to authentication; the registration active and the session's
    /// user's. When any fails, nothing is written: the challenge stays answerable, no session, no use recorded.
    @Test(arguments: engines)
    func aSignInCompletesOnlyWhileItsChallengeRegistrationAndUserHold(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertUser(Self.user("u2"))
            try await store.insertRegistration(Self.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            try await store.insertRegistration(Self.registration("p", user: "u1", device: "d2"))
            let expiry = Self.t0.addingTimeInterval(60)
            for (value, registration, purpose) in [("c", "a", ChallengePurpose.authentication), ("r", "a", .registration), ("q", "p", .authentication)] {
                try await store.insertChallenge(
                    ChallengeRecord(challenge: value, registrationId: registration, purpose: purpose, createdAt: Self.t0, expiresAt: expiry)
                )
            }
            var tokens = 0
            func attempt(_ challenge: String, registration: String = "a", user: String = "u1", at: Date) async throws -> UserRecord? {
                tokens += 1
                return try await store.completeSignIn(
                    challenge: challenge, registrationId: registration,
                    session: Self.session("t\(tokens)", user: user, registration: registration), at: at
                )
            }
            // At its expiry the challenge no longer answers; nor does one of another purpose, registration or user.
            #expect(try await attempt("c", at: expiry) == nil)
            #expect(try await attempt("r", at: Self.t0) == nil)
            #expect(try await attempt("c", registration: "b", at: Self.t0) == nil)
            #expect(try await attempt("c", user: "u2", at: Self.t0) == nil)
            // A pending registration signs nothing in.
            #expect(try await attempt("q", registration: "p", at: Self.t0) == nil)
            // Locked, then revoked.
            #expect(try await store.recordFailedSignature(registrationId: "a", threshold: 1, at: Self.t0))
            #expect(try await attempt("c", at: Self.t0) == nil)
            #expect(try await store.unlockRegistration(id: "a", at: Self.t0))
            #expect(try await store.updateRegistrationStatus(id: "a", from: [.active], to: .revoked, at: Self.t0))
            #expect(try await attempt("c", at: Self.t0) == nil)
            for token in 1...tokens { #expect(try await store.session(tokenHash: "t\(token)") == nil) }
            #expect(try await store.registration(id: "a")?.lastUsedAt == nil)
            #expect(try await store.unconsumedChallenge("c", registrationId: "a", purpose: .authentication) != nil)
            // Active again (a test-only path: nothing in the server reactivates a revoked registration): it completes.
            #expect(try await store.updateRegistrationStatus(id: "a", from: [.revoked], to: .active, at: Self.t0))
            #expect(try await attempt("c", at: expiry.addingTimeInterval(-0.001)) == Self.user("u1"))
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
            try await store.insertChallenge(
                ChallengeRecord(challenge: "c", registrationId: "a", purpose: .authentication, createdAt: Self.t0, expiresAt: later.addingTimeInterval(1))
            )
            var session = Self.session("t1", user: "u1", registration: "a")
            session.passwordAuthenticatedAt = Self.t0
            #expect(try await store.completeSignIn(challenge: "c", registrationId: "a", session: session, events: [event("e1", "biometric_login")], at: later) == Self.user("u1"))
            #expect(try await store.session(tokenHash: "t1") == session)
            let registration = try #require(try await store.registration(id: "a"))
            #expect(registration.lastUsedAt == later && registration.failedAttempts == 0)
            // The challenge is spent: a second completion writes nothing at all.
            #expect(try await store.completeSignIn(challenge: "c", registrationId: "a", session: Self.session("t2", user: "u1", registration: "a"), events: [event("e2", "biometric_login")], at: later) == nil)
            #expect(try await store.session(tokenHash: "t2") == nil)

            try await store.insertWebAuthnChallenge(
                WebAuthnChallengeRecord(challenge: "w", purpose: .authentication, userId: nil, allowCredentials: [], createdAt: Self.t0, expiresAt: later)
            )
            let events = [event("e3", "passkey_login", passkey: "p"), event("e4", "clone_warning", passkey: "p")]
            #expect(try await store.completePasskeySignIn(
                challenge: "w", passkeyId: "p", signCount: 3, backedUp: false, cloneWarning: true, session: Self.session("t3", user: "u1"), events: events, at: later
            ))
            let passkey = try #require(try await store.passkey(id: "p"))
            #expect(passkey.signCount == 3 && passkey.cloneWarnings == 1 && passkey.failedAttempts == 0 && passkey.lastUsedAt == later)
            #expect(try await !store.completePasskeySignIn(
                challenge: "w", passkeyId: "p", signCount: 9, backedUp: false, cloneWarning: true, session: Self.session("t4", user: "u1"), events: [event("e5", "passkey_login", passkey: "p")], at: later
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
            let issued = ChallengeRecord(
                challenge: "c", registrationId: "a", purpose: .authentication, createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(60)
            )
            try await store.insertChallenge(issued)
            let user = try #require(try await store.user(id: "u1"))
            #expect(user.requireDeviceBoundPasskeys && user.displayName == "Ada")
            let registration = try #require(try await store.registration(id: "a"))

            let attempt = try #require(try await store.signInAttempt(registrationId: "a", challenge: "c", purpose: .authentication))
            #expect(attempt == SignInAttemptRecord(registration: registration, user: user, challenge: issued))
            // The challenge is bound to its registration and purpose, and must be unconsumed; the registration is
            // found without it.
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "c", purpose: .registration)?.challenge == nil)
            #expect(try await store.signInAttempt(registrationId: "b", challenge: "c", purpose: .authentication)?.challenge == nil)
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "x", purpose: .authentication)?.registration == registration)
            #expect(try await store.consumeChallenge("c", registrationId: "a", purpose: .authentication, at: Self.t0) != nil)
            #expect(try await store.signInAttempt(registrationId: "a", challenge: "c", purpose: .authentication)?.challenge == nil)
            #expect(try await store.signInAttempt(registrationId: "missing", challenge: "c", purpose: .authentication) == nil)
        }
    }

    @Test(arguments: engines)
    func aPasskeyIsReadWithItsOwner(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertPasskey(Self.passkey("p1", user: "u1"))
            let found = try #require(try await store.passkeyAndOwner(credentialId: "cred-p1"))
            #expect(found.passkey == (try await store.passkey(credentialId: "cred-p1")))
            #expect(found.user == (try await store.user(id: "u1")))
            #expect(try await store.passkeyAndOwner(credentialId: "cred-other") == nil)
        }
    }

    @Test(arguments: engines)
    func aPasskeySignInCompletesOncePerChallengeAndOnlyThenWrites(database: TestDatabase) async throws {
        try await Self.withStore(database) { store in
            try await store.insertUser(Self.user("u1"))
            try await store.insertPasskey(Self.passkey("p", user: "u1"))
            let record = WebAuthnChallengeRecord(
                challenge: "wa", purpose: .authentication, userId: nil, allowCredentials: [], createdAt: Self.t0,
                expiresAt: Self.t0.addingTimeInterval(60)
            )
            try await store.insertWebAuthnChallenge(record)
            #expect(try await store.unconsumedWebAuthnChallenge("wa", purpose: .registration) == nil)
            #expect(try await store.unconsumedWebAuthnChallenge("wa", purpose: .authentication) == record)
            // Each task reports its own index: the group yields results in completion order, not in task order.
            let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let won = try await store.completePasskeySignIn(
                            challenge: "wa", passkeyId: "p", signCount: Int64(10 + index), backedUp: true, cloneWarning: false,
                            session: Self.session("s\(index)", user: "u1"), at: Self.t0
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
            #expect(try await store.unconsumedWebAuthnChallenge("wa", purpose: .authentication) == nil)
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
            try await store.insertWebAuthnChallenge(
                WebAuthnChallengeRecord(
                    challenge: "ok", purpose: .authentication, userId: nil, allowCredentials: [], createdAt: Self.t0,
                    expiresAt: Self.t0.addingTimeInterval(60)
                )
            )
            #expect(try await store.completePasskeySignIn(
                challenge: "ok", passkeyId: "p", signCount: 1, backedUp: false, cloneWarning: false,
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
