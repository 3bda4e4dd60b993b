import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebhooks
import TouchstoneCrypto
import NIOConcurrencyHelpers

/// Webhooks from the outbox to a receiver (issue #32): what is sent, signed how, retried when, and what is not sent.
struct WebhookDeliveryTests {
    typealias Accounts = AuthorizationCodeFlowTests

    static func endpoint(_ client: any TestClientProtocol, key: String, events: [String] = []) async throws -> (id: String, secret: WebhookSecret) {
        let created = try await client.request(
            .post, "/v1/admin/webhooks", token: key, json: ["url": "https://hooks.example.com/touchstone", "events": events])
        try #require(created.status == .created)
        return (try #require(created.value("id")), try WebhookSecret(try #require(created.value("secret"))))
    }

    static func isSigned(_ post: WebhookPost, by secret: WebhookSecret, now: Date) -> Bool {
        WebhookSignature.isValid(
            id: post.header("webhook-id") ?? "", timestamp: post.header("webhook-timestamp") ?? "",
            signatures: post.header("webhook-signature") ?? "", body: post.body, secret: secret, now: now)
    }

    @Test func aSignUpIsAnnouncedSignedAndWithoutSecrets() async throws {
        let receiver = WebhookTestReceiver()
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(clock: clock, postWebhook: receiver.post) { client, key, _ in
            let (_, secret) = try await Self.endpoint(client, key: key)
            let (email, userId) = try await Accounts.signUp(client)
            #expect(await receiver.waitFor(2))
            let created = try #require(try receiver.posts(ofType: "user.created").first)
            let session = try #require(try receiver.posts(ofType: "session.created").first)
            for post in [created, session] {
                #expect(post.url.value == "https://hooks.example.com/touchstone")
                #expect(post.header("content-type") == "application/json")
                #expect(post.header("webhook-id")?.hasPrefix("msg_") == true)
                #expect(post.header("webhook-timestamp") == String(Int64(clock.now.timeIntervalSince1970)))
                #expect(Self.isSigned(post, by: secret, now: clock.now))
                #expect(!String(decoding: post.body, as: UTF8.self).contains(Accounts.password))
            }
            #expect(created.header("webhook-id") != session.header("webhook-id"))
            let user = try #require(try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])
            #expect((user["data"] as? [String: Any])?["userId"] as? String == userId)
            #expect((user["data"] as? [String: Any])?["email"] as? String == email)
            #expect((user["timestamp"] as? String).flatMap { Date(rfc3339: $0) } == clock.now)
            let signIn = try #require(try JSONSerialization.jsonObject(with: Data(session.body)) as? [String: Any])
            #expect((signIn["data"] as? [String: Any])?["method"] as? String == "sign_up")

            // A password sign-in is a session.created too; a wrong password is not.
            _ = try await client.request(.post, "/v1/sessions", json: ["email": email, "password": "wrong password 123"])
            _ = try await client.request(.post, "/v1/sessions", json: ["email": email, "password": Accounts.password])
            #expect(await receiver.waitFor(3))
            let methods = try receiver.events().compactMap { ($0["data"] as? [String: Any])?["method"] as? String }
            #expect(methods.sorted() == ["password", "sign_up"])
        }
    }

    @Test func aFailedAttemptIsRetriedWithTheSameId() async throws {
        let receiver = WebhookTestReceiver(status: 503)
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(clock: clock, postWebhook: receiver.post) { client, key, _ in
            let (id, secret) = try await Self.endpoint(client, key: key, events: ["user.deleted"])
            let (_, userId) = try await Accounts.signUp(client)
            #expect(try await client.request(.delete, "/v1/admin/users/\(userId)", token: key).status == .noContent)
            #expect(await receiver.waitFor(1))
            receiver.status.withLockedValue { $0 = 200 }
            clock.advance(by: 7)  // the first retry: 5 s ± 20 %
            #expect(await receiver.waitFor(2))
            let posts = receiver.posts.withLockedValue { $0 }
            #expect(posts[0].header("webhook-id") == posts[1].header("webhook-id"))
            #expect(Self.isSigned(posts[1], by: secret, now: clock.now))
            #expect(try receiver.posts(ofType: "user.deleted").count == 2)

            // The history says what happened, attempt by attempt.
            var delivered = false
            for _ in 0..<200 where !delivered {
                let history = try await client.request(.get, "/v1/admin/webhooks/\(id)/deliveries", token: key)
                let deliveries = try #require(history.any(["deliveries"]) as? [[String: Any]])
                delivered = deliveries.first?["state"] as? String == "delivered"
                if delivered {
                    let attempts = try #require(deliveries.first?["attempts"] as? [[String: Any]])
                    #expect(attempts.map { $0["status"] as? Int } == [503, 200])
                    #expect(attempts.first?["error"] as? String == "HTTP 503")
                    #expect(deliveries.first?["eventId"] as? String == posts[0].header("webhook-id"))
                } else {
                    try await Task.sleep(for: .milliseconds(50))  // the attempt is recorded just after the answer
                }
            }
            #expect(delivered)

            // An operator's retry sends it again, with the same id.
            let eventId = try #require(posts[0].header("webhook-id"))
            let retry = try await client.request(.post, "/v1/admin/webhooks/\(id)/deliveries/\(eventId)/retry", token: key)
            #expect(retry.status == .accepted)
            #expect(await receiver.waitFor(3))
            #expect(receiver.posts.withLockedValue { $0[2].header("webhook-id") } == eventId)
        }
    }

    @Test func filtersDisabledEndpointsAndTheTestEvent() async throws {
        let receiver = WebhookTestReceiver()
        try await TestServer.runWithAdminKey(postWebhook: receiver.post) { client, key, _ in
            let (id, _) = try await Self.endpoint(client, key: key, events: ["device.revoked"])
            _ = try await Accounts.signUp(client)
            // Not subscribed: nothing was queued for the endpoint.
            let none = try await client.request(.get, "/v1/admin/webhooks/\(id)/deliveries", token: key)
            #expect((none.any(["deliveries"]) as? [Any])?.isEmpty == true)
            // The test event goes whatever the filter.
            let test = try await client.request(.post, "/v1/admin/webhooks/\(id)/test", token: key)
            #expect(test.status == .accepted)
            #expect(await receiver.waitFor(1))
            #expect(try receiver.posts(ofType: "webhook.test").first?.header("webhook-id") == test.value("eventId"))
            // Disabled: nothing is queued for it while it is.
            _ = try await client.request(.patch, "/v1/admin/webhooks/\(id)", token: key, json: ["enabled": false, "events": [] as [String]])
            _ = try await Accounts.signUp(client)
            let after = try await client.request(.get, "/v1/admin/webhooks/\(id)/deliveries", token: key)
            #expect((after.any(["deliveries"]) as? [Any])?.count == 1)
        }
    }

    @Test func aRotatedSecretSignsBesideTheNewOneForADay() async throws {
        let receiver = WebhookTestReceiver()
        let clock = ManualClock()
        try await TestServer.runWithAdminKey(clock: clock, postWebhook: receiver.post) { client, key, _ in
            let (id, old) = try await Self.endpoint(client, key: key)
            let rotated = try await client.request(.post, "/v1/admin/webhooks/\(id)/rotate-secret", token: key)
            let new = try WebhookSecret(try #require(rotated.value("secret")))
            _ = try await client.request(.post, "/v1/admin/webhooks/\(id)/test", token: key)
            #expect(await receiver.waitFor(1))
            let post = try #require(receiver.posts.withLockedValue { $0.first })
            #expect(post.header("webhook-signature")?.split(separator: " ").count == 2)
            #expect(Self.isSigned(post, by: new, now: clock.now) && Self.isSigned(post, by: old, now: clock.now))
            clock.advance(by: 24 * 3600 + 1)
            _ = try await client.request(.post, "/v1/admin/webhooks/\(id)/test", token: key)
            #expect(await receiver.waitFor(2))
            let later = try #require(receiver.posts.withLockedValue { $0.last })
            #expect(later.header("webhook-signature")?.split(separator: " ").count == 1)
            #expect(Self.isSigned(later, by: new, now: clock.now) && !Self.isSigned(later, by: old, now: clock.now))
        }
    }

    @Test func deviceEventsCarryTheirIds() async throws {
        let receiver = WebhookTestReceiver()
        try await TestServer.runWithAdminKey(postWebhook: receiver.post) { client, key, _ in
            _ = try await Self.endpoint(client, key: key, events: ["device.enrolled", "device.revoked"])
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let registrationId = try await flow.enroll(account.token, TestDeviceKey(.es256))
            #expect(try await client.request(.delete, "/v1/biometrics/registrations/\(registrationId)", token: account.token).status == .noContent)
            #expect(await receiver.waitFor(2))
            for type in ["device.enrolled", "device.revoked"] {
                let post = try #require(try receiver.posts(ofType: type).first, "\(type)")
                let body = try #require(try JSONSerialization.jsonObject(with: Data(post.body)) as? [String: Any])
                #expect((body["data"] as? [String: Any])?["registrationId"] as? String == registrationId, "\(type)")
            }
        }
    }
}
