import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing
import TouchstoneAuth
import TouchstoneCrypto
@testable import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// The schedule of the signing key set, as pure rules.
struct SigningKeyScheduleTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    /// 30 days, published 1 hour ahead, retired keys published 6 minutes longer.
    static let schedule = SigningKeySchedule(rotationInterval: 30 * 86_400, publicationLead: 3600, retiredPublication: 360)

    static func key(_ generation: Int64, activatesAt: Date, createdAt: Date? = nil) -> SigningKeyRecord {
        SigningKeyRecord(
            kid: "k\(generation)",
            generation: generation,
            algorithm: "ES256",
            publicJWK: "{}",
            sealedPrivateKey: [],
            createdAt: createdAt ?? activatesAt,
            activatesAt: activatesAt
        )
    }

    @Test func theFirstKeySignsAtOnce() {
        #expect(Self.schedule.due([], at: Self.start) == Self.start)
    }

    @Test func aNewKeyIsDueOneLeadTimeBeforeTheIntervalEnds() {
        let first = Self.key(1, activatesAt: Self.start)
        let dueAt = Self.start.addingTimeInterval(30 * 86_400 - 3600)
        #expect(Self.schedule.due([first], at: dueAt.addingTimeInterval(-1)) == nil)
        #expect(Self.schedule.due([first], at: dueAt) == dueAt.addingTimeInterval(3600))
    }

    @Test func aPendingKeyIsPublishedButDoesNotSign() {
        let first = Self.key(1, activatesAt: Self.start)
        let next = Self.key(2, activatesAt: Self.start.addingTimeInterval(7200), createdAt: Self.start.addingTimeInterval(3600))
        let now = Self.start.addingTimeInterval(3601)
        #expect(Self.schedule.active([first, next], at: now)?.kid == "k1")
        #expect(Self.schedule.published([first, next], at: now).map(\.kid) == ["k1", "k2"])
        // While a key is pending, no other is due.
        #expect(Self.schedule.due([first, next], at: now) == nil)
    }

    @Test func aRetiredKeyStaysPublishedUntilItsLastTokenExpires() {
        let first = Self.key(1, activatesAt: Self.start)
        let switchAt = Self.start.addingTimeInterval(7200)
        let next = Self.key(2, activatesAt: switchAt)
        #expect(Self.schedule.active([first, next], at: switchAt)?.kid == "k2")
        #expect(Self.schedule.retiredAt(first, among: [first, next], at: switchAt) == switchAt)
        #expect(Self.schedule.published([first, next], at: switchAt.addingTimeInterval(359)).map(\.kid) == ["k1", "k2"])
        #expect(Self.schedule.published([first, next], at: switchAt.addingTimeInterval(360)).map(\.kid) == ["k2"])
    }

    @Test func retiredKeysStayPublishedForReceipts() {
        var settings = TokenSettings()
        settings.accessTokenLifetime = .seconds(300)
        let schedule = SigningKeySchedule(settings: settings)  // receipts: 7 days by default
        #expect(schedule.retiredPublication == 7 * 86_400)
        settings.receiptKeyRetention = .zero
        #expect(SigningKeySchedule(settings: settings).retiredPublication == 360)
    }

    @Test func anImmediateRotationOvertakesAPendingKey() {
        let first = Self.key(1, activatesAt: Self.start)
        let pending = Self.key(2, activatesAt: Self.start.addingTimeInterval(3600))
        let urgent = Self.key(3, activatesAt: Self.start.addingTimeInterval(60))
        let keys = [first, pending, urgent]
        #expect(Self.schedule.active(keys, at: Self.start.addingTimeInterval(60))?.kid == "k3")
        // The pending key never signs: a newer generation is already active when its time comes.
        #expect(Self.schedule.active(keys, at: Self.start.addingTimeInterval(7200))?.kid == "k3")
    }

    @Test func statusesAsOperatorsSeeThem() {
        let first = Self.key(1, activatesAt: Self.start)
        let second = Self.key(2, activatesAt: Self.start.addingTimeInterval(100))
        let third = Self.key(3, activatesAt: Self.start.addingTimeInterval(10_000))
        let infos = SigningKeyInfo.list([first, second, third], schedule: Self.schedule, now: Self.start.addingTimeInterval(500))
        #expect(infos.map(\.status) == ["pending", "active", "expired"])
        #expect(infos.map(\.published) == [true, true, false])
        let early = SigningKeyInfo.list([first, second, third], schedule: Self.schedule, now: Self.start.addingTimeInterval(150))
        #expect(early.map(\.status) == ["pending", "active", "retired"])
    }
}

/// Rotation through the admin API, with tokens issued before, during and after.
struct SigningKeyRotationTests {
    static func configuration() -> TouchstoneConfiguration {
        AccessTokenTests.configuration {
            $0.tokens.publicationLead = .seconds(600)
            $0.tokens.jwksMaxAge = .seconds(300)
            $0.tokens.accessTokenLifetime = .seconds(300)
            $0.tokens.receiptKeyRetention = .zero
        }
    }

    static func kids(_ client: any TestClientProtocol) async throws -> [String] {
        let jwks = try await client.request(.get, "/.well-known/jwks.json")
        return (jwks.json["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String }
    }

    @Test func aRotatedKeyIsPublishedFirstSignsAfterTheLeadAndTheOldOneStaysForItsTokens() async throws {
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(configuration: Self.configuration(), clock: clock) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("rotate@example.com")
            let before = try await AccessTokenTests.accessToken(client, account.token)
            let oldKid = try #require(try SignedToken.header(of: before).kid)

            let rotated = try await client.request(.post, "/v1/admin/signing-keys/rotate", token: adminKey, json: [:])
            #expect(rotated.status == .created)
            #expect(rotated.value("status") == "pending")
            let newKid = try #require(rotated.value("kid"))
            #expect(newKid != oldKid)
            // Published at once, not signing yet.
            #expect(Set(try await Self.kids(client)) == [oldKid, newKid])
            #expect(try SignedToken.header(of: try await AccessTokenTests.accessToken(client, account.token)).kid == oldKid)

            // After the lead time the new key signs; the old one stays published while its tokens may live.
            clock.advance(by: 600)
            let after = try await AccessTokenTests.accessToken(client, account.token)
            #expect(try SignedToken.header(of: after).kid == newKid)
            #expect(Set(try await Self.kids(client)) == [oldKid, newKid])
            let list = try await client.request(.get, "/v1/admin/signing-keys", token: adminKey)
            let statuses = (list.json["keys"] as? [[String: Any]] ?? []).map { "\($0["kid"] ?? "")=\($0["status"] ?? "")" }
            #expect(statuses == ["\(newKid)=active", "\(oldKid)=retired"])

            // Once every token it signed has expired (lifetime plus a minute of leeway), it is gone.
            clock.advance(by: 360)
            #expect(try await Self.kids(client) == [newKid])

            // The rotation is in the trail; issuing tokens is not.
            let events = try await client.request(.get, "/v1/admin/events?type=signing_key.rotated", token: adminKey)
            let reasons = (events.json["events"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
            #expect(reasons.count == 1 && reasons[0].contains(newKid) && reasons[0].contains("admin:ops"))
        }
    }

    @Test func anImmediateRotationSignsAtOnce() async throws {
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(configuration: Self.configuration(), clock: clock) { client, adminKey, _ in
            let account = try await Flow(client: client).signUp("urgent@example.com")
            let rotated = try await client.request(.post, "/v1/admin/signing-keys/rotate", token: adminKey, json: ["immediately": true])
            #expect(rotated.value("status") == "active")
            let token = try await AccessTokenTests.accessToken(client, account.token)
            #expect(try SignedToken.header(of: token).kid == rotated.value("kid"))
        }
    }

    @Test func signingKeyRoutesNeedAnAdminKey() async throws {
        try await TestServer.runWithAdminKey(configuration: Self.configuration()) { client, adminKey, _ in
            let bad = try await client.request(.post, "/v1/admin/signing-keys/rotate", token: adminKey, json: ["immediately": "yes"])
            #expect(bad.status == .badRequest && bad.errorCode == "invalid_request")
            let account = try await Flow(client: client).signUp("notadmin@example.com")
            #expect(try await client.request(.get, "/v1/admin/signing-keys", token: account.token).errorCode == "admin_key_required")
            #expect(try await client.request(.post, "/v1/admin/signing-keys/rotate", token: account.token).errorCode == "admin_key_required")
        }
    }

    @Test func theScheduleRotatesOnItsOwn() async throws {
        let clock = ManualClock()
        let configuration = Self.configuration()
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        let dependencies = TestServer.dependencies(clock: clock, store: store)
        let ring = try SigningKeys.ring(configuration, store, dependencies, Logger(label: "test"))
        try await ring.maintain()
        let first = try await ring.signingKey()
        clock.advance(by: 30 * 86_400 - 600 - 1)
        try await ring.maintain()
        #expect(try await ring.keys(fresh: true).count == 1)
        clock.advance(by: 1)
        try await ring.maintain()
        let keys = try await ring.keys(fresh: true)
        #expect(keys.count == 2)
        #expect(try await ring.signingKey().kid == first.kid)
        clock.advance(by: 600)
        #expect(try await ring.signingKey().kid == keys.last?.kid)
        try await store.shutdown()
    }

    @Test func twoRingsOnOneDatabaseMakeOneFirstKey() async throws {
        let path = TemporaryFiles.path("rings", suffix: ".sqlite")
        defer { TemporaryFiles.remove(path) }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: Logger(label: "test"))
        try await store.migrate()
        var configuration = Self.configuration()
        configuration.tokens.keyEncryptionKey = Array(repeating: 7, count: 32)
        let dependencies = TestServer.dependencies(clock: ManualClock(), store: store)
        let rings = try (0..<4).map { _ in try SigningKeys.ring(configuration, store, dependencies, Logger(label: "test")) }
        let kids = try await withThrowingTaskGroup(of: String.self) { group in
            for ring in rings { group.addTask { try await ring.signingKey().kid } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(kids.count == 1)
        #expect(try await store.signingKeys().count == 1)
        try await store.shutdown()
    }
}

/// The key-encryption key that seals the signing keys at rest.
struct KeyEncryptionKeyTests {
    @Test func sqliteWithoutAConfiguredKeyMakesA0600FileAndKeepsUsingIt() async throws {
        let configuration = AccessTokenTests.configuration()
        guard case .sqliteFile(let path) = configuration.database else { Issue.record("not a file database"); return }
        defer { TemporaryFiles.remove(path) }
        let kekFile = KeyEncryptionKey.defaultFile(database: path)
        let firstKid: String = try await Self.withApp(configuration) { client in
            let account = try await Flow(client: client).signUp("kek@example.com")
            return try #require(try SignedToken.header(of: try await AccessTokenTests.accessToken(client, account.token)).kid)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: kekFile)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // A restart opens the same key set with the same file.
        let secondKid: String = try await Self.withApp(configuration) { client in
            let session = try await Flow(client: client).signIn("kek@example.com")
            return try #require(try SignedToken.header(of: try await AccessTokenTests.accessToken(client, session)).kid)
        }
        #expect(firstKid == secondKid)
    }

    @Test func aServerWhoseKeyCannotOpenTheStoredKeysRefusesToStart() async throws {
        var configuration = AccessTokenTests.configuration()
        guard case .sqliteFile(let path) = configuration.database else { Issue.record("not a file database"); return }
        defer { TemporaryFiles.remove(path) }
        configuration.tokens.keyEncryptionKey = Array(repeating: 1, count: 32)
        _ = try await Self.withApp(configuration) { client in try await client.request(.get, "/.well-known/jwks.json").status }
        configuration.tokens.keyEncryptionKey = Array(repeating: 2, count: 32)
        do {
            _ = try await buildApplication(configuration: configuration, dependencies: TestServer.dependencies(clock: ManualClock()))
            Issue.record("the server started with the wrong key-encryption key")
        } catch let error as KeyEncryptionKeyError {
            #expect(error.description.contains("does not open the stored token-signing key"))
            #expect(error.description.contains("TOUCHSTONE_KEY_ENCRYPTION_KEY"))
        }
    }

    @Test func postgresNeedsAConfiguredKey() throws {
        var configuration = TouchstoneConfiguration()
        configuration.database = .postgres(url: "postgres://touchstone@127.0.0.1:1/touchstone")
        #expect(throws: KeyEncryptionKeyError.self) {
            try KeyEncryptionKey.resolve(configuration, randomBytes: { Array(repeating: 0, count: $0) }, logger: Logger(label: "test"))
        }
        configuration.tokens.keyEncryptionKey = Array(repeating: 3, count: 32)
        _ = try KeyEncryptionKey.resolve(configuration, randomBytes: { Array(repeating: 0, count: $0) }, logger: Logger(label: "test"))
    }

    @Test func theKeyComesFromTheEnvironmentOrAFileAndIsNeverEchoed() throws {
        let secret = Data(repeating: 9, count: 32).base64EncodedString()
        let fromValue = try TouchstoneConfiguration(environment: ["TOUCHSTONE_KEY_ENCRYPTION_KEY": secret])
        #expect(fromValue.tokens.keyEncryptionKey == Array(repeating: 9, count: 32))
        let file = TemporaryFiles.path("kek", suffix: ".txt")
        defer { TemporaryFiles.remove(file) }
        try (secret + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try TouchstoneConfiguration(environment: ["TOUCHSTONE_KEY_ENCRYPTION_KEY_FILE": file])
        #expect(fromFile.tokens.keyEncryptionKey == Array(repeating: 9, count: 32))
        let short = Data(repeating: 9, count: 16).base64EncodedString()
        do {
            _ = try TouchstoneConfiguration(environment: ["TOUCHSTONE_KEY_ENCRYPTION_KEY": short])
            Issue.record("a 16-byte key was accepted")
        } catch {
            #expect(!"\(error)".contains(short))
            #expect("\(error)".contains("openssl rand -base64 32"))
        }
    }

    @Test func storedPrivateKeysAreSealed() async throws {
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        var configuration = AccessTokenTests.configuration()
        configuration.tokens.keyEncryptionKey = Array(repeating: 5, count: 32)
        let ring = try SigningKeys.ring(configuration, store, TestServer.dependencies(clock: ManualClock(), store: store), Logger(label: "test"))
        let key = try await ring.signingKey()
        #expect(!key.publicJWK.contains("\"d\""))
        let opened = try KeySealing.open(key.sealedPrivateKey, key: .init(data: Array(repeating: 5, count: 32)), context: Array(key.kid.utf8))
        #expect(opened.count == 32)
        #expect(throws: KeySealing.Failure.authenticationFailed) {
            try KeySealing.open(key.sealedPrivateKey, key: .init(data: Array(repeating: 6, count: 32)), context: Array(key.kid.utf8))
        }
        #expect(throws: KeySealing.Failure.authenticationFailed) {
            try KeySealing.open(key.sealedPrivateKey, key: .init(data: Array(repeating: 5, count: 32)), context: Array("other".utf8))
        }
        try await store.shutdown()
    }

    @Test func aKeyFileThatHoldsNoKeyRefusesToStart() throws {
        let path = TemporaryFiles.path("bad-kek", suffix: ".sqlite")
        defer { TemporaryFiles.remove(path) }
        try "not a key\n".write(toFile: KeyEncryptionKey.defaultFile(database: path), atomically: true, encoding: .utf8)
        var configuration = TouchstoneConfiguration()
        configuration.database = .sqliteFile(path: path)
        #expect(throws: KeyEncryptionKeyError.self) {
            try KeyEncryptionKey.resolve(configuration, randomBytes: { Array(repeating: 0, count: $0) }, logger: Logger(label: "test"))
        }
    }

    @Test(arguments: [
        ("TOUCHSTONE_ISSUER", "not a url"), ("TOUCHSTONE_ISSUER", "ftp://auth.example"), ("TOUCHSTONE_TOKEN_CLIENT_ID", ""),
        ("TOUCHSTONE_ACCESS_TOKEN_TTL_SECONDS", "5"), ("TOUCHSTONE_TOKEN_ALGORITHM", "HS256"),
        ("TOUCHSTONE_SIGNING_KEY_ROTATION_DAYS", "0"), ("TOUCHSTONE_SIGNING_KEY_LEAD_SECONDS", "60"),
        ("TOUCHSTONE_JWKS_MAX_AGE_SECONDS", "-1"), ("TOUCHSTONE_RECEIPT_KEY_RETENTION_DAYS", "many"),
        ("TOUCHSTONE_KEY_ENCRYPTION_KEY_FILE", "/nonexistent/kek"),
    ])
    func badTokenSettingsAreRefusedByName(setting: String, value: String) {
        do {
            _ = try TouchstoneConfiguration(environment: [setting: value])
            Issue.record("\(setting)=\(value) was accepted")
        } catch let error as ConfigurationError {
            #expect(error.setting == setting)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    static func withApp<T: Sendable>(_ configuration: TouchstoneConfiguration, _ body: @Sendable (any TestClientProtocol) async throws -> T)
        async throws -> T
    {
        let app = try await buildApplication(configuration: configuration, dependencies: TestServer.dependencies(clock: ManualClock()))
        return try await app.test(.router, body)
    }
}
