import Foundation
import Testing
import TouchstoneStore

/// The OpenID provider's codes, token families, refresh tokens, consents and back-channel notices (issue #31), on
/// every engine.
struct AuthorizationStoreTests {
    static let t0 = StoreTests.t0

    static func code(_ hash: String, family: String, session: String = "sid-1") -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(
            codeHash: hash, clientId: "c1", userId: "u1", sessionId: session, redirectURI: "https://c1.example.com/cb",
            codeChallenge: "challenge", nonce: "n", scope: "openid offline_access", authTime: t0, amr: ["pwd"], acr: nil,
            familyId: family, createdAt: t0, expiresAt: t0.addingTimeInterval(60))
    }

    static func family(_ id: String, session: String = "sid-1") -> TokenFamilyRecord {
        TokenFamilyRecord(id: id, clientId: "c1", userId: "u1", sessionId: session, scope: "openid offline_access", authTime: t0,
            amr: ["hwk", "user"], acr: "phrh", createdAt: t0)
    }

    /// A user, a client with a back-channel URI, and a session with the sid `sid-1`.
    static func setUp(_ store: any TouchstoneStore) async throws -> SessionRecord {
        try await store.insertUser(StoreTests.user("u1"))
        try await store.insertClient(OAuthClientStoreTests.client("c1"))
        var session = StoreTests.session("token-1", user: "u1")
        session.id = "sid-1"
        try await store.insertSession(session)
        return session
    }

    @Test(arguments: TestDatabase.available)
    func aCodeIsRedeemedOnceThenSeenAsAReplay(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            _ = try await Self.setUp(store)
            let code = Self.code("h1", family: "f1")
            try await store.insertAuthorizationCode(code)
            let later = Self.t0.addingTimeInterval(5)
            var redeemed = code
            redeemed.usedAt = later
            #expect(try await store.redeemAuthorizationCode(codeHash: "h1", at: later) == .redeemed(redeemed))
            #expect(try await store.redeemAuthorizationCode(codeHash: "h1", at: later) == .replayed(redeemed))
            #expect(try await store.redeemAuthorizationCode(codeHash: "nope", at: later) == .unknown)
            try await store.shutdown()
        }
    }

    /// A registration that ends (revoked, invalidated, replaced) takes the sessions bound to its proof key with it as
    /// revocations, so their clients are owed back-channel logouts (issue #44 item 3); a session of a registration
    /// without a proof key, or opened by a password, stays.
    @Test(arguments: TestDatabase.available)
    func anEndedRegistrationRevokesItsBoundSessionsAndOwesTheirLogouts(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            try await store.insertUser(StoreTests.user("u1"))
            try await store.insertClient(OAuthClientStoreTests.client("c1"))
            var bound = StoreTests.registration("r1", user: "u1", device: "d1")
            bound.proofKeyThumbprint = "jkt-1"
            try await store.insertRegistration(bound)
            try await store.insertRegistration(StoreTests.registration("r2", user: "u1", device: "d2"))
            _ = try await store.activateRegistration(id: "r1", replacing: .sameDevice, at: Self.t0)
            _ = try await store.activateRegistration(id: "r2", replacing: .sameDevice, at: Self.t0)
            for (token, id, registration) in [("t-bound", "sid-bound", "r1"), ("t-unbound", "sid-unbound", "r2")] {
                var session = StoreTests.session(token, user: "u1", registration: registration)
                session.id = id
                try await store.insertSession(session)
                try await store.insertTokenFamily(Self.family("f-\(id)", session: id))
            }
            var password = StoreTests.session("t-password", user: "u1")
            password.id = "sid-password"
            try await store.insertSession(password)

            let at = Self.t0.addingTimeInterval(30)
            #expect(try await store.updateRegistrationStatus(id: "r1", from: [.active, .locked], to: .revoked, at: at))
            #expect(try await store.updateRegistrationStatus(id: "r2", from: [.active, .locked], to: .revoked, at: at))
            #expect(try await store.session(tokenHash: "t-bound")?.revokedAt == at)
            #expect(try await store.session(tokenHash: "t-unbound")?.revokedAt == nil)
            #expect(try await store.session(tokenHash: "t-password")?.revokedAt == nil)
            let due = try await store.dueLogoutNotices(now: at, limit: 10)
            #expect(due.map(\.sessionId) == ["sid-bound"])
            try await store.shutdown()
        }
    }

    /// The user's list of sessions names the clients holding live tokens from each (issue #42).
    @Test(arguments: TestDatabase.available)
    func theClientsOfASessionAreTheOnesWithLiveTokens(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            _ = try await Self.setUp(store)
            #expect(try await store.openIDClientNames(sessionIds: []) == [:])
            #expect(try await store.openIDClientNames(sessionIds: ["sid-1"]) == [:])
            try await store.insertTokenFamily(Self.family("f1"))
            try await store.insertTokenFamily(Self.family("f2"))
            #expect(try await store.openIDClientNames(sessionIds: ["sid-1", "sid-other"]) == ["sid-1": [OAuthClientStoreTests.client("c1").name]])
            _ = try await store.revokeTokenFamily(id: "f1", at: Self.t0)
            _ = try await store.revokeTokenFamily(id: "f2", at: Self.t0)
            #expect(try await store.openIDClientNames(sessionIds: ["sid-1"]) == [:])
            try await store.shutdown()
        }
    }

    @Test(arguments: TestDatabase.available)
    func refreshTokensAreUsedOnceAndFamiliesRevoke(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            _ = try await Self.setUp(store)
            try await store.insertTokenFamily(Self.family("f1"))
            await #expect(throws: StoreError.conflict("")) { try await store.insertTokenFamily(Self.family("f1")) }
            #expect(try await store.tokenFamily(id: "f1") == Self.family("f1"))
            let token = RefreshTokenRecord(tokenHash: "r1", familyId: "f1", scope: "openid", createdAt: Self.t0)
            try await store.insertRefreshToken(token)
            var used = token
            used.usedAt = Self.t0.addingTimeInterval(1)
            #expect(try await store.useRefreshToken(tokenHash: "r1", at: used.usedAt!) == .fresh(used))
            #expect(try await store.useRefreshToken(tokenHash: "r1", at: Self.t0.addingTimeInterval(2)) == .reused(used))
            #expect(try await store.useRefreshToken(tokenHash: "r2", at: Self.t0) == .unknown)
            #expect(try await store.refreshToken(tokenHash: "r1") == used)

            #expect(try await store.revokeTokenFamily(id: "f1", at: Self.t0.addingTimeInterval(3)))
            #expect(try await !store.revokeTokenFamily(id: "f1", at: Self.t0.addingTimeInterval(4)))
            #expect(try await store.tokenFamily(id: "f1")?.isLive == false)
            try await store.insertTokenFamily(Self.family("f2"))
            try await store.insertTokenFamily(Self.family("f3"))
            #expect(try await store.revokeTokenFamilies(userId: "u1", clientId: "c1", at: Self.t0) == 2)

            try await store.revokeAccessToken(jti: "j1", expiresAt: Self.t0.addingTimeInterval(300))
            try await store.revokeAccessToken(jti: "j1", expiresAt: Self.t0.addingTimeInterval(300))
            #expect(try await store.isAccessTokenRevoked(jti: "j1"))
            #expect(try await !store.isAccessTokenRevoked(jti: "j2"))
            try await store.shutdown()
        }
    }

    @Test(arguments: TestDatabase.available)
    func consentsAreUpsertedListedAndDeleted(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            _ = try await Self.setUp(store)
            try await store.upsertConsent(OAuthConsentRecord(userId: "u1", clientId: "c1", scopes: ["openid"], grantedAt: Self.t0))
            let wider = OAuthConsentRecord(userId: "u1", clientId: "c1", scopes: ["openid", "email"], grantedAt: Self.t0.addingTimeInterval(9))
            try await store.upsertConsent(wider)
            #expect(try await store.consent(userId: "u1", clientId: "c1") == wider)
            #expect(try await store.consents(userId: "u1") == [wider])
            #expect(try await store.deleteConsent(userId: "u1", clientId: "c1"))
            #expect(try await !store.deleteConsent(userId: "u1", clientId: "c1"))
            #expect(try await store.consents(userId: "u1").isEmpty)
            try await store.shutdown()
        }
    }

    /// Deleting an account ends its sessions and keeps the logouts they owe (and the ones still owed from before)
    /// after the user and its token families are gone (issue #42; #44 item 3).
    @Test(arguments: TestDatabase.available)
    func aDeletedAccountsSessionsStillOweTheirLogouts(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            _ = try await Self.setUp(store)
            try await store.insertTokenFamily(Self.family("f1"))
            // An older session that ended before, whose logout failed once and waits for its retry.
            var older = StoreTests.session("token-old", user: "u1")
            older.id = "sid-old"
            try await store.insertSession(older)
            try await store.insertTokenFamily(Self.family("f0", session: "sid-old"))
            #expect(try await store.revokeSession(tokenHash: "token-old", at: Self.t0))
            try await store.recordLogoutNotice(clientId: "c1", sessionId: "sid-old", delivered: false, retryAt: Self.t0.addingTimeInterval(50), error: "HTTP 503")

            let end = Self.t0.addingTimeInterval(10)
            #expect(try await store.deleteUser(id: "u1", at: end))
            #expect(try await store.user(id: "u1") == nil)
            #expect(try await store.tokenFamily(id: "f1") == nil)
            let due = try await store.dueLogoutNotices(now: end, limit: 10)
            #expect(due == [LogoutNoticeRecord(clientId: "c1", sessionId: "sid-1", userId: "u1",
                backchannelLogoutURI: "https://c1.example.com/backchannel", attempts: 0)])
            let later = try await store.dueLogoutNotices(now: Self.t0.addingTimeInterval(60), limit: 10)
            #expect(Set(later.map(\.sessionId)) == ["sid-1", "sid-old"])
            #expect(later.first { $0.sessionId == "sid-old" }?.attempts == 1)

            try await store.recordLogoutNotice(clientId: "c1", sessionId: "sid-1", delivered: true, retryAt: nil, error: nil)
            try await store.recordLogoutNotice(clientId: "c1", sessionId: "sid-old", delivered: false, retryAt: nil, error: "gave up")
            #expect(try await store.dueLogoutNotices(now: Self.t0.addingTimeInterval(1000), limit: 10).isEmpty)
            #expect(try await !store.deleteUser(id: "u1", at: end))
            // Done notices go with the purge, a day later.
            _ = try await store.purgeExpired(before: end.addingTimeInterval(2 * 86_400))
            try await store.shutdown()
        }
    }

    @Test(arguments: TestDatabase.available)
    func endingASessionEndsItsFamiliesAndOwesOneLogoutPerClient(database: TestDatabase) async throws {
        try await database.withFixture { fixture in
            let store = try await fixture.open()
            let session = try await Self.setUp(store)
            try await store.insertTokenFamily(Self.family("f1"))
            try await store.insertTokenFamily(Self.family("f2"))
            #expect(try await store.dueLogoutNotices(now: Self.t0.addingTimeInterval(100), limit: 10).isEmpty)

            let end = Self.t0.addingTimeInterval(10)
            #expect(try await store.revokeSession(tokenHash: session.tokenHash, at: end))
            #expect(try await store.tokenFamily(id: "f1")?.sessionEndedAt == end)
            #expect(try await store.tokenFamily(id: "f1")?.isLive == false)
            let due = try await store.dueLogoutNotices(now: end, limit: 10)
            #expect(due == [LogoutNoticeRecord(clientId: "c1", sessionId: "sid-1", userId: "u1",
                backchannelLogoutURI: "https://c1.example.com/backchannel", attempts: 0)])

            // A failure: retried later, counted.
            try await store.recordLogoutNotice(clientId: "c1", sessionId: "sid-1", delivered: false, retryAt: end.addingTimeInterval(2), error: "HTTP 503")
            #expect(try await store.dueLogoutNotices(now: end.addingTimeInterval(1), limit: 10).isEmpty)
            #expect(try await store.dueLogoutNotices(now: end.addingTimeInterval(2), limit: 10).first?.attempts == 1)
            try await store.recordLogoutNotice(clientId: "c1", sessionId: "sid-1", delivered: true, retryAt: nil, error: nil)
            #expect(try await store.dueLogoutNotices(now: end.addingTimeInterval(100), limit: 10).isEmpty)

            // "Sign out everywhere" ends families too; a day later the purge removes what is done.
            var other = StoreTests.session("token-2", user: "u1")
            other.id = "sid-2"
            try await store.insertSession(other)
            try await store.insertTokenFamily(Self.family("f3", session: "sid-2"))
            #expect(try await store.revokeSessions(userId: "u1", keeping: nil, at: end) == 1)
            #expect(try await store.tokenFamily(id: "f3")?.sessionEndedAt == end)
            _ = try await store.purgeExpired(before: end.addingTimeInterval(2 * 86_400))
            #expect(try await store.tokenFamily(id: "f1") == nil)
            #expect(try await store.tokenFamily(id: "f3") != nil)  // its logout is still owed
            try await store.shutdown()
        }
    }
}
