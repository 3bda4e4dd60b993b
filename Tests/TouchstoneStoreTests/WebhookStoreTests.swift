import Foundation
import Testing
import TouchstoneStore

/// Webhook endpoints and their outbox (issue #32), on every engine.
struct WebhookStoreTests {
    static let t0 = StoreTests.t0

    static func endpoint(_ id: String, events: [String] = ["*"], enabled: Bool = true) -> WebhookEndpointRecord {
        WebhookEndpointRecord(
            id: id, url: "https://\(id).example.com/hook", description: "d", events: events, enabled: enabled,
            sealedSecret: Array(repeating: 1, count: 40), createdAt: t0)
    }

    static func outbox(_ id: String, _ type: String, at offset: TimeInterval = 0) -> WebhookOutboxEvent {
        WebhookOutboxEvent(id: id, type: type, payload: #"{"type":"\#(type)"}"#, createdAt: t0.addingTimeInterval(offset))
    }

    static func audit(_ id: String, _ webhooks: [WebhookOutboxEvent]) -> AuditEventRecord {
        var event = AuditEventRecord(id: id, occurredAt: t0, type: "registration.revoked", outcome: "success", userId: "u1")
        event.webhooks = webhooks
        return event
    }

    static func messages(_ store: any TouchstoneStore, _ endpoint: String) async throws -> [String] {
        try await store.webhookDeliveries(endpointId: endpoint, limit: 100).map(\.0.eventId).sorted()
    }

    @Test(arguments: TestDatabase.available)
    func anEventIsQueuedForEveryEnabledSubscribedEndpointWithItsAuditEvent(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertWebhookEndpoint(Self.endpoint("all"))
            try await store.insertWebhookEndpoint(Self.endpoint("devices", events: ["device.revoked", "device.locked"]))
            try await store.insertWebhookEndpoint(Self.endpoint("users", events: ["user.created"]))
            try await store.insertWebhookEndpoint(Self.endpoint("off", enabled: false))
            await #expect(throws: StoreError.conflict("")) { try await store.insertWebhookEndpoint(Self.endpoint("all")) }
            try await store.insertAuditEvent(Self.audit("a1", [Self.outbox("msg_1", "device.revoked")]))
            #expect(try await Self.messages(store, "all") == ["msg_1"])
            #expect(try await Self.messages(store, "devices") == ["msg_1"])
            #expect(try await Self.messages(store, "users") == [])
            #expect(try await Self.messages(store, "off") == [])
            // An event without webhooks queues nothing; a rolled-back unit of work neither.
            try await store.insertAuditEvent(Self.audit("a2", []))
            await #expect(throws: StoreError.self) {
                try await store.unitOfWork { tx in
                    try await tx.insertAuditEvent(Self.audit("a3", [Self.outbox("msg_2", "device.revoked")]))
                    throw StoreError.conflict("the change failed")
                }
            }
            #expect(try await Self.messages(store, "all") == ["msg_1"])
            #expect(try await store.webhookQueueStatistics() == WebhookQueueStatistics(pending: 2, oldestPendingAt: Self.t0))
            // A changed subscription applies to the next event.
            var users = try #require(try await store.webhookEndpoint(id: "users"))
            users.events = ["device.revoked"]
            users.description = "changed"
            #expect(try await store.updateWebhookEndpoint(users))
            try await store.insertAuditEvent(Self.audit("a4", [Self.outbox("msg_3", "device.revoked", at: 1)]))
            #expect(try await Self.messages(store, "users") == ["msg_3"])
            #expect(try await store.webhookEndpoint(id: "users")?.description == "changed")
            #expect(try await store.webhookEndpoints().map(\.id) == ["all", "devices", "off", "users"])
            #expect(try await store.deleteWebhookEndpoint(id: "users"))
            #expect(try await !store.deleteWebhookEndpoint(id: "users"))
            #expect(try await store.webhookEndpoint(id: "users") == nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aSignInQueuesItsSessionEventInItsOwnStatement(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertWebhookEndpoint(Self.endpoint("sessions", events: ["session.created"]))
            try await store.insertUser(StoreTests.user("u1"))
            try await store.insertRegistration(StoreTests.registration("a", user: "u1", device: "d1"))
            _ = try await store.activateRegistration(id: "a", replacing: .sameDevice, at: Self.t0)
            var event = AuditEventRecord(id: "e1", occurredAt: Self.t0, type: "biometric_login", outcome: "success", userId: "u1")
            event.webhooks = [Self.outbox("msg_s1", "session.created")]
            let session = StoreTests.session("t1", user: "u1", registration: "a")
            #expect(try await store.completeSignIn(challenge: StoreTests.answered("c"), session: session, events: [event], at: Self.t0) != nil)
            // The same challenge again: no session, no event, no message.
            event.id = "e2"
            event.webhooks = [Self.outbox("msg_s2", "session.created")]
            #expect(try await store.completeSignIn(challenge: StoreTests.answered("c"), session: StoreTests.session("t2", user: "u1", registration: "a"), events: [event], at: Self.t0) == nil)
            #expect(try await Self.messages(store, "sessions") == ["msg_s1"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func leasesHandEachMessageToOneDispatcherInOrder(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertWebhookEndpoint(Self.endpoint("e"))
            try await store.insertWebhookEndpoint(Self.endpoint("off", enabled: false))
            for index in 0..<5 {
                try await store.insertAuditEvent(Self.audit("a\(index)", [Self.outbox("msg_\(index)", "device.revoked", at: Double(index))]))
            }
            let now = Self.t0.addingTimeInterval(10)
            #expect(try await store.dueWebhookEndpoints(now: now, limit: 10) == ["e"])
            let first = try await store.claimWebhookMessages(endpointId: "e", now: now, leaseUntil: now.addingTimeInterval(60), token: "A", limit: 3)
            #expect(first.map(\.eventId) == ["msg_0", "msg_1", "msg_2"])
            let second = try await store.claimWebhookMessages(endpointId: "e", now: now, leaseUntil: now.addingTimeInterval(60), token: "B", limit: 3)
            #expect(second.map(\.eventId) == ["msg_3", "msg_4"])
            #expect(try await store.claimWebhookMessages(endpointId: "e", now: now, leaseUntil: now.addingTimeInterval(60), token: "C", limit: 3).isEmpty)
            #expect(try await store.dueWebhookEndpoints(now: now, limit: 10) == [])
            #expect(try await store.claimWebhookMessages(endpointId: "off", now: now, leaseUntil: now, token: "D", limit: 3).isEmpty)

            func attempt(_ event: String, _ number: Int, status: Int?, at: Date) -> WebhookAttemptRecord {
                WebhookAttemptRecord(endpointId: "e", eventId: event, number: number, attemptedAt: at, statusCode: status, latencyMillis: 12,
                    error: status == 200 ? nil : "HTTP \(status ?? 0)")
            }
            // A lease held by another dispatcher cannot be finished.
            #expect(try await !store.finishWebhookAttempt(attempt("msg_0", 1, status: 200, at: now), token: "B", outcome: .delivered))
            #expect(try await store.finishWebhookAttempt(attempt("msg_0", 1, status: 200, at: now), token: "A", outcome: .delivered))
            #expect(try await store.finishWebhookAttempt(attempt("msg_1", 1, status: 503, at: now), token: "A", outcome: .retry(at: now.addingTimeInterval(5))))
            #expect(try await store.finishWebhookAttempt(attempt("msg_2", 1, status: nil, at: now), token: "A", outcome: .failed))
            #expect(try await store.webhookEndpoint(id: "e")?.lastSuccessAt == now)
            #expect(try await store.webhookEndpoint(id: "e")?.failingSince == now)

            // A dispatcher that died: its lease runs out and another takes the messages over.
            let afterLease = now.addingTimeInterval(61)
            let takenOver = try await store.claimWebhookMessages(endpointId: "e", now: afterLease, leaseUntil: afterLease.addingTimeInterval(60), token: "E", limit: 10)
            #expect(takenOver.map(\.eventId) == ["msg_1", "msg_3", "msg_4"])
            #expect(takenOver.first?.attempts == 1 && takenOver.first?.roundAttempts == 1)

            let deliveries = try await store.webhookDeliveries(endpointId: "e", limit: 10)
            #expect(deliveries.map(\.0.eventId) == ["msg_4", "msg_3", "msg_2", "msg_1", "msg_0"])
            let delivered = try #require(deliveries.last)
            #expect(delivered.0.state == .delivered && delivered.0.deliveredAt == now && delivered.1.map(\.statusCode) == [200])
            #expect(deliveries[2].0.state == .failed && deliveries[2].1.first?.error == "HTTP 0")

            // An operator's retry queues a delivered or failed message again as a new round.
            #expect(try await store.retryWebhookMessage(endpointId: "e", eventId: "msg_0", at: afterLease))
            #expect(try await !store.retryWebhookMessage(endpointId: "e", eventId: "msg_nope", at: afterLease))
            let again = try await store.claimWebhookMessages(endpointId: "e", now: afterLease, leaseUntil: afterLease.addingTimeInterval(60), token: "F", limit: 10)
            #expect(again.map(\.eventId) == ["msg_0"] && again.first?.roundAttempts == 0 && again.first?.attempts == 1)
            #expect(try await store.finishWebhookAttempt(attempt("msg_0", 2, status: 200, at: afterLease), token: "F", outcome: .delivered))
            #expect(try await store.webhookDeliveries(endpointId: "e", limit: 10).last?.1.map(\.number) == [1, 2])

            #expect(try await store.purgeWebhookMessages(before: afterLease) == 2)
            #expect(try await Self.messages(store, "e") == ["msg_1", "msg_3", "msg_4"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func failingEndpointsAreDisabledOnlyWithoutASuccessSince(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            var record = Self.endpoint("e")
            try await store.insertWebhookEndpoint(record)
            let later = Self.t0.addingTimeInterval(100)
            #expect(try await store.disableFailingWebhookEndpoint(id: "e", since: later, reason: "failing", at: later))
            #expect(try await store.webhookEndpoint(id: "e")?.enabled == false)
            #expect(try await store.webhookEndpoint(id: "e")?.disabledReason == "failing")
            #expect(try await !store.disableFailingWebhookEndpoint(id: "e", since: later, reason: "failing", at: later))
            // Disabled: nothing is queued for it, and a test is refused.
            try await store.insertAuditEvent(Self.audit("a1", [Self.outbox("msg_1", "device.revoked")]))
            #expect(try await !store.enqueueWebhookTest(endpointId: "e", event: Self.outbox("msg_t", "webhook.test")))
            record.enabled = true
            record.disabledReason = nil
            #expect(try await store.updateWebhookEndpoint(record))
            #expect(try await store.enqueueWebhookTest(endpointId: "e", event: Self.outbox("msg_t", "webhook.test")))
            #expect(try await Self.messages(store, "e") == ["msg_t"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func rotationKeepsThePreviousSecretAndDeletingAUserCascades(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertWebhookEndpoint(Self.endpoint("e"))
            let expires = Self.t0.addingTimeInterval(86400)
            #expect(try await store.rotateWebhookSecret(id: "e", sealedSecret: Array(repeating: 2, count: 40), previousExpiresAt: expires, at: Self.t0))
            let rotated = try #require(try await store.webhookEndpoint(id: "e"))
            #expect(rotated.sealedSecret == Array(repeating: 2, count: 40))
            #expect(rotated.previousSealedSecret == Array(repeating: 1, count: 40))
            #expect(rotated.previousSecretExpiresAt == expires)
            #expect(try await !store.rotateWebhookSecret(id: "nope", sealedSecret: [1], previousExpiresAt: expires, at: Self.t0))

            try await store.insertUser(StoreTests.user("u1"))
            try await store.insertSession(StoreTests.session("t1", user: "u1"))
            try await store.insertRegistration(StoreTests.registration("a", user: "u1", device: "d1"))
            #expect(try await store.deleteUser(id: "u1", at: Date()))
            #expect(try await !store.deleteUser(id: "u1", at: Date()))
            #expect(try await store.session(tokenHash: "t1") == nil)
            #expect(try await store.registration(id: "a") == nil)
        }
    }
}
