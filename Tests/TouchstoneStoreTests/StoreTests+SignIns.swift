import Foundation
import SQLKit
import Testing
import TouchstoneStore

// Completing sign-ins: a challenge answered once, and only then the writes (StoreTests.swift has the fixtures).
extension StoreTests {
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
    @Test(arguments: engines.filter { $0.isPersistent })
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
