import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebhooks
import Crypto

@testable import TouchstoneServer

/// The dispatcher's schedule and the poster's defences, driven directly (an injected clock; a real HTTP server on
/// loopback for the poster).
struct WebhookDispatcherTests {
    static func setUp(
        post: @escaping @Sendable (WebhookPost) async -> WebhookPostResult,
        clock: ManualClock
    ) async throws -> (WebhookDispatcher, any TouchstoneStore, String) {
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        let key = SymmetricKey(size: .bits256)
        var dependencies = TouchstoneDependencies.live
        dependencies.now = { clock.now }
        let created = try await WebhookEndpoints.create(
            url: "https://hooks.example.com/", events: [], description: "", policy: DestinationPolicy(), keyEncryptionKey: key,
            store: store, dependencies: dependencies)
        let audit = AuditLog(store: store, secrets: Secrets(randomBytes: dependencies.randomBytes), now: { clock.now }, logger: Logger(label: "test"))
        let dispatcher = WebhookDispatcher(
            store: store, keyEncryptionKey: key, post: post, policy: DestinationPolicy(), concurrency: 4, audit: audit,
            logger: Logger(label: "test"), now: { clock.now }, randomBytes: { [0x80] + Array(repeating: 0, count: max(0, $0 - 1)) })
        return (dispatcher, store, created.record.id)
    }

    @Test func anEndpointFailingForAWholeRoundIsDisabled() async throws {
        let clock = ManualClock()
        let attempts = NIOLockedValueBox(0)
        let (dispatcher, store, id) = try await Self.setUp(post: { _ in
            attempts.withLockedValue { $0 += 1 }
            return .answered(status: 500)
        }, clock: clock)
        let eventId = try #require(try await WebhookEndpoints.sendTest(id: id, store: store, dependencies: .init(now: { clock.now }, randomBytes: { _ in Array(repeating: 1, count: 16) })))
        // Twelve attempts: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h and six times 10 h (the jitter is 0 here).
        var waits: [TimeInterval] = []
        for _ in 0..<12 {
            #expect(try await dispatcher.deliverDue() == 1)
            #expect(try await dispatcher.deliverDue() == 0)  // nothing is due before the next wait
            let message = try #require(try await store.webhookDeliveries(endpointId: id, limit: 1).first?.0)
            guard let next = message.nextAttemptAt, message.state == .pending else { break }
            waits.append(next.timeIntervalSince(clock.now))
            clock.advance(by: next.timeIntervalSince(clock.now))
        }
        #expect(waits.map { Int($0) } == [5, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000, 36000, 36000])
        #expect(attempts.withLockedValue { $0 } == 12)
        let (message, history) = try #require(try await store.webhookDeliveries(endpointId: id, limit: 1).first)
        #expect(message.state == .failed && message.eventId == eventId && history.count == 12)
        let endpoint = try #require(try await store.webhookEndpoint(id: id))
        #expect(!endpoint.enabled && endpoint.disabledReason == "failing")
        let failed = try await store.auditEvents(AuditEventQuery(type: "webhook.delivery_failed"))
        #expect(failed.count == 1 && failed.first?.reason?.contains("HTTP 500 after 12 attempts") == true)
        #expect(try await store.auditEvents(AuditEventQuery(type: "webhook.endpoint_disabled")).count == 1)
        try await store.shutdown()
    }

    @Test func endpointRulesHoldForTheCLIToo() async throws {
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        let key = SymmetricKey(size: .bits256)
        func create(_ description: String) async throws -> WebhookEndpoints.Created {
            try await WebhookEndpoints.create(
                url: "https://hooks.example.com/", events: [], description: description, policy: DestinationPolicy(), keyEncryptionKey: key,
                store: store)
        }
        // The CLI passes text the JSON decoder never saw: the description's own rules refuse it.
        for bad in ["a\u{0007}b", "a\rb", String(repeating: "e\u{301}", count: 251)] {
            await #expect(throws: WebhookError.self) { try await create(bad) }
        }
        let created = try await create("two\nlines")
        #expect(try WebhookEndpoints.secret(of: created.record, keyEncryptionKey: key) == created.secret)
        // Another key-encryption key does not open it, and says so.
        #expect(throws: KeyEncryptionKeyError.self) {
            try WebhookEndpoints.secret(of: created.record, keyEncryptionKey: SymmetricKey(size: .bits256))
        }
        // A sealed secret opens only as its own endpoint's.
        var moved = created.record
        moved.id = "wh_other"
        #expect(throws: KeyEncryptionKeyError.self) { try WebhookEndpoints.secret(of: moved, keyEncryptionKey: key) }
        try await store.shutdown()
    }

    @Test func typesWithoutASubscriberAreNotAnnounced() async throws {
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        let subscriptions = WebhookSubscriptions()
        #expect(subscriptions.announces("user.created"))  // nothing read yet: every type
        await subscriptions.refresh(from: store, logger: Logger(label: "test"))
        #expect(!subscriptions.announces("user.created"))
        let key = SymmetricKey(size: .bits256)
        let created = try await WebhookEndpoints.create(
            url: "https://hooks.example.com/", events: ["device.revoked"], description: "", policy: DestinationPolicy(), keyEncryptionKey: key,
            store: store)
        // Made elsewhere (the CLI): seen at the next read.
        #expect(!subscriptions.announces("device.revoked"))
        await subscriptions.refresh(from: store, logger: Logger(label: "test"))
        #expect(subscriptions.announces("device.revoked") && !subscriptions.announces("user.created"))
        // The audit log of a server with these subscriptions makes webhooks for subscribed types only.
        let audit = AuditLog(
            store: store, secrets: Secrets(randomBytes: systemRandom), now: { Date() }, logger: Logger(label: "test"), subscriptions: subscriptions)
        #expect(audit.event(.registrationRevoked, userId: "u", registrationId: "r").webhooks.map(\.type) == ["device.revoked"])
        #expect(audit.event(.userCreated, userId: "u").webhooks.isEmpty)
        #expect(audit.webhook("session.created", data: [:]) == nil)
        _ = try await WebhookEndpoints.update(id: created.record.id, .init(enabled: false), policy: DestinationPolicy(), store: store)
        await subscriptions.refresh(from: store, logger: Logger(label: "test"))
        #expect(!subscriptions.announces("device.revoked"))
        _ = try await WebhookEndpoints.create(
            url: "https://all.example.com/", events: [], description: "", policy: DestinationPolicy(), keyEncryptionKey: key, store: store)
        await subscriptions.refresh(from: store, logger: Logger(label: "test"))
        #expect(subscriptions.announces("user.created") && subscriptions.announces("signing_key.rotated"))
        try await store.shutdown()
    }

    @Test func anEndpointThatSucceededMeanwhileStaysEnabled() async throws {
        let clock = ManualClock()
        let (dispatcher, store, id) = try await Self.setUp(post: { post in
            // The test event fails for good; every other one is delivered.
            String(decoding: post.body, as: UTF8.self).contains("webhook.test") ? .answered(status: 410) : .answered(status: 204)
        }, clock: clock)
        let dependencies = TouchstoneDependencies(now: { clock.now }, randomBytes: systemRandom)
        _ = try await WebhookEndpoints.sendTest(id: id, store: store, dependencies: dependencies)
        try await dispatcher.deliverDue()
        try await store.insertAuditEvent(
            { var event = AuditEventRecord(id: "a1", occurredAt: clock.now, type: "x", outcome: "success")
              event.webhooks = [WebhookOutboxEvent(id: "msg_ok", type: "user.created", payload: "{}", createdAt: clock.now)]
              return event }())
        try await dispatcher.deliverDue()
        for _ in 0..<11 {
            clock.advance(by: 40_000)
            try await dispatcher.deliverDue()
        }
        let states = try await store.webhookDeliveries(endpointId: id, limit: 5).map { $0.0.state }
        #expect(Set(states) == [.failed, .delivered])
        #expect(try await store.webhookEndpoint(id: id)?.enabled == true)
        try await store.shutdown()
    }
}

@Sendable func systemRandom(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

/// The live poster against a real HTTP server on loopback: redirects not followed, slow receivers cut off, large
/// answers not read whole, private destinations refused after resolution.
struct WebhookPosterTests {
    static func withReceiver(_ body: @Sendable (Int) async throws -> Void) async throws {
        let router = Router()
        router.post("/ok") { _, _ in Response(status: .noContent) }
        router.post("/redirect") { _, _ in Response(status: .found, headers: [.location: "/ok"]) }
        router.post("/slow") { _, _ -> Response in
            try await Task.sleep(for: .seconds(3))
            return Response(status: .ok)
        }
        router.post("/huge") { _, _ in
            Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(repeating: 0x61, count: 4 * 1024 * 1024)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in try await body(try #require(client.port)) }
    }

    static func post(_ poster: WebhookPoster, _ url: String) async throws -> WebhookPostResult {
        await poster.post(WebhookPost(url: try WebhookURL(parsing: url), headers: [("content-type", "application/json")], body: Array("{}".utf8)))
    }

    @Test func redirectsAreNotFollowedAndSlowOrHugeAnswersDoNotStall() async throws {
        try await Self.withReceiver { port in
            let poster = WebhookPoster(policy: DestinationPolicy(allowPrivate: .loopback), timeout: .seconds(20))
            #expect(try await Self.post(poster, "http://127.0.0.1:\(port)/ok") == .answered(status: 204))
            #expect(try await Self.post(poster, "http://127.0.0.1:\(port)/redirect") == .answered(status: 302))
            #expect(try await Self.post(poster, "http://127.0.0.1:\(port)/huge") == .answered(status: 200))
            let impatient = WebhookPoster(policy: DestinationPolicy(allowPrivate: .loopback), timeout: .seconds(1))
            defer { Task { await impatient.shutdown() } }
            guard case .failed(let reason) = try await Self.post(impatient, "http://127.0.0.1:\(port)/slow") else {
                Issue.record("a receiver slower than the deadline must fail the attempt")
                return
            }
            #expect(reason.contains("no answer"))
            await poster.shutdown()
        }
    }

    @Test func namesThatResolveToPrivateAddressesAreRefused() async throws {
        try await Self.withReceiver { port in
            // A public-looking name that resolves to loopback: refused without the operator's leave, then allowed.
            let resolve: @Sendable (String) async throws -> [IPAddress] = { _ in [IPAddress("127.0.0.1")!] }
            let strict = WebhookPoster(policy: DestinationPolicy(allowHTTP: true), timeout: .seconds(20), resolve: resolve)
            #expect(try await Self.post(strict, "http://hooks.example.com:\(port)/ok")
                == .failed("refused: hooks.example.com resolves to 127.0.0.1 is a loopback address: loopback destinations need TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE=loopback (or all)"))
            let mixed = WebhookPoster(policy: DestinationPolicy(allowHTTP: true), timeout: .seconds(20), resolve: { _ in [IPAddress("93.184.216.34")!, IPAddress("10.0.0.7")!] })
            guard case .failed(let reason) = try await Self.post(mixed, "http://hooks.example.com:\(port)/ok") else {
                Issue.record("one private address among the resolved ones must refuse the attempt")
                return
            }
            #expect(reason.contains("10.0.0.7 is a private address"))
            // With leave, the connection goes to the checked address whatever the name.
            let allowed = WebhookPoster(policy: DestinationPolicy(allowHTTP: true, allowPrivate: .loopback), timeout: .seconds(20), resolve: resolve)
            #expect(try await Self.post(allowed, "http://hooks.example.com:\(port)/ok") == .answered(status: 204))
            await allowed.shutdown()
            let literal = WebhookPoster(policy: DestinationPolicy(), timeout: .seconds(20))
            guard case .failed(let refused) = try await Self.post(literal, "http://127.0.0.1:\(port)/ok") else {
                Issue.record("a loopback literal must be refused under the default policy")
                return
            }
            #expect(refused.hasPrefix("refused: "))
        }
    }
}

/// The audit-to-webhook mapping: its table of types agrees with what it builds, and every catalogue type has a source.
struct WebhookEventsMappingTests {
    @Test func theTableAgreesWithTheEventsBuilt() {
        var produced = Set<String>()
        for type in AuditEventType.allCases {
            let record = AuditEventRecord(id: "e", occurredAt: Date(), type: type.rawValue, outcome: "success", userId: "u")
            let built = WebhookEvents.outbox(for: record, type: type, outcome: .success, extra: [:], randomBytes: systemRandom).map(\.type)
            #expect(built == (WebhookEvents.types[type] ?? []), "\(type.rawValue)")
            produced.formUnion(built)
            if type == .passwordLogin {
                #expect(WebhookEvents.outbox(for: record, type: type, outcome: .failure, extra: [:], randomBytes: systemRandom).isEmpty)
            }
        }
        #expect(produced == Set(WebhookEventType.all.map(\.name)))
    }
}
