import Foundation
import Testing
import TouchstoneWebhooks

struct WebhookSignatureTests {
    // The example of the Standard Webhooks specification and the Svix documentation ("Verifying payloads manually"),
    // checked here against the `standardwebhooks` Python library's `Webhook.sign`.
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    let timestamp: Int64 = 1_614_265_330
    let body = Array(#"{"test": 2432232314}"#.utf8)

    @Test func signsTheSpecificationsExample() throws {
        let header = WebhookSignature.header(id: self.id, timestamp: self.timestamp, body: self.body, secrets: [try WebhookSecret(self.secret)])
        #expect(header == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func rotationSignsWithBothSecretsSpaceSeparated() throws {
        let old = try WebhookSecret(self.secret)
        let new = WebhookSecret(key: Array(repeating: 7, count: 32))
        let header = WebhookSignature.header(id: self.id, timestamp: self.timestamp, body: self.body, secrets: [new, old])
        let parts = header.split(separator: " ")
        #expect(parts.count == 2)
        #expect(parts[1] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let now = Date(timeIntervalSince1970: TimeInterval(self.timestamp))
        for key in [old, new] {
            #expect(WebhookSignature.isValid(id: self.id, timestamp: "\(self.timestamp)", signatures: header, body: self.body, secret: key, now: now))
        }
    }

    @Test func verificationRefusesAlteredOrStaleMessages() throws {
        let key = try WebhookSecret(self.secret)
        let header = WebhookSignature.header(id: self.id, timestamp: self.timestamp, body: self.body, secrets: [key])
        let now = Date(timeIntervalSince1970: TimeInterval(self.timestamp))
        #expect(!WebhookSignature.isValid(id: self.id, timestamp: "\(self.timestamp)", signatures: header, body: self.body + [0x20], secret: key, now: now))
        #expect(!WebhookSignature.isValid(id: "msg_other", timestamp: "\(self.timestamp)", signatures: header, body: self.body, secret: key, now: now))
        #expect(!WebhookSignature.isValid(id: self.id, timestamp: "\(self.timestamp)", signatures: header, body: self.body, secret: key, now: now.addingTimeInterval(301)))
        #expect(!WebhookSignature.isValid(id: self.id, timestamp: "x", signatures: header, body: self.body, secret: key, now: now))
        #expect(!WebhookSignature.isValid(id: self.id, timestamp: "\(self.timestamp)", signatures: "v2," + header.dropFirst(3), body: self.body, secret: key, now: now))
    }

    @Test func secretsAreWhsecAndBase64OfTwentyFourToSixtyFourBytes() throws {
        let made = WebhookSecret.generate { Array(repeating: 1, count: $0) }
        #expect(made.description.hasPrefix("whsec_"))
        #expect(made.key.count == 32)
        #expect(try WebhookSecret(made.description) == made)
        for bad in ["", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!!!", "whsec_" + Data(count: 23).base64EncodedString(), "whsec_" + Data(count: 65).base64EncodedString()] {
            #expect(throws: WebhookError.self) { try WebhookSecret(bad) }
        }
    }
}

struct WebhookEventTests {
    @Test func bodyIsCompactSortedJSONWithAnRFC3339Timestamp() {
        let event = WebhookEvent(
            id: "msg_1",
            type: "device.revoked",
            timestamp: Date(timeIntervalSince1970: 1_764_150_166.123),
            data: ["userId": .string("u1"), "registrationId": .string("r/1"), "passkeyId": .null]
        )
        #expect(String(decoding: event.body(), as: UTF8.self)
            == #"{"data":{"passkeyId":null,"registrationId":"r/1","userId":"u1"},"timestamp":"2025-11-26T09:42:46.123Z","type":"device.revoked"}"#)
    }

    @Test func stringsAreEscapedAsJSONAndParseBack() throws {
        let tricky = "quote \" backslash \\ slash / newline \n tab \t bell \u{07} é 🔑"
        let event = WebhookEvent(
            id: "msg_1", type: "user.created", timestamp: Date(timeIntervalSince1970: 0),
            data: ["email": .string(tricky), "ids": .strings(["a", "b\""]), "count": .integer(-3), "flag": .bool(true)])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(event.body())) as? [String: Any])
        let data = try #require(parsed["data"] as? [String: Any])
        #expect(data["email"] as? String == tricky)
        #expect(data["ids"] as? [String] == ["a", "b\""])
        #expect(data["count"] as? Int == -3 && data["flag"] as? Bool == true)
        #expect(parsed["timestamp"] as? String == "1970-01-01T00:00:00.000Z")
    }

    @Test(arguments: [-11_676_096_000.0, -1.5, 0, 951_782_400.999, 1_709_164_800.5, 4_102_444_799.999, 253_402_300_799.0])
    func timestampsMatchFoundationsFormatter(_ seconds: Double) {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let date = Date(timeIntervalSince1970: (seconds * 1000).rounded(.down) / 1000)
        #expect(WebhookEvent.rfc3339(date) == formatter.string(from: date), "\(seconds)")
    }

    @Test func idsAreMsgAndBase64URL() {
        let id = WebhookEvent.newId { Array(repeating: 0xff, count: $0) }
        #expect(id == "msg_" + String(repeating: "_", count: 21) + "w")
    }

    @Test func subscriptionsNameKnownTypesOnce() throws {
        #expect(try WebhookEventType.subscription([]) == ["*"])
        #expect(try WebhookEventType.subscription(["*"]) == ["*"])
        #expect(try WebhookEventType.subscription(["user.created", "*"]) == ["*"])
        #expect(throws: WebhookError.self) { try WebhookEventType.subscription(["*", "*"]) }
        #expect(try WebhookEventType.subscription(["device.revoked", "user.created"]) == ["user.created", "device.revoked"])
        #expect(throws: WebhookError.invalidEventType("unknown event type 'device.exploded'; GET /v1/admin/webhooks/event-types lists them")) {
            try WebhookEventType.subscription(["device.exploded"])
        }
        #expect(throws: WebhookError.self) { try WebhookEventType.subscription(["user.created", "user.created"]) }
        #expect(throws: WebhookError.self) { try WebhookEventType.subscription(["webhook.test"]) }
        #expect(WebhookEventType.all.count == Set(WebhookEventType.all.map(\.name)).count)
        for name in ["user.created", "user.deleted", "session.created", "password.changed", "device.enrolled", "device.revoked", "device.locked",
            "device.invalidated", "passkey.registered", "passkey.deleted", "lockout.started", "confirmation.approved", "confirmation.declined",
            "signing_key.rotated"]
        {
            #expect(WebhookEventType.named(name) != nil, "\(name)")
        }
    }
}

struct RetryScheduleTests {
    @Test func firstRetryIsFiveSecondsPlusOrMinusTwentyPercent() {
        let now = Date(timeIntervalSince1970: 0)
        let schedule = RetrySchedule.standard
        #expect(schedule.nextAttempt(after: 1, at: now, unit: 0) == now.addingTimeInterval(4))
        #expect(schedule.nextAttempt(after: 1, at: now, unit: 0.5) == now.addingTimeInterval(5))
        #expect(schedule.nextAttempt(after: 1, at: now, unit: 1) == now.addingTimeInterval(6))
        #expect(schedule.nextAttempt(after: 2, at: now, unit: 0.5) == now.addingTimeInterval(300))
    }

    @Test func roundLastsAboutThreeDaysThenEnds() {
        let schedule = RetrySchedule.standard
        #expect(schedule.maximumAttempts == 12)
        #expect(abs(schedule.span / 3600 - 67.59) < 0.01)
        #expect(schedule.nextAttempt(after: 11, at: Date(), unit: 0.5) != nil)
        #expect(schedule.nextAttempt(after: 12, at: Date(), unit: 0.5) == nil)
        #expect(schedule.nextAttempt(after: 0, at: Date(), unit: 0.5) == nil)
    }
}
