import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebhooks

/// `/v1/admin/webhooks` (issue #32): endpoints through the admin API, with every error code.
struct WebhookAdminTests {
    static let hook: [String: any Sendable] = [
        "url": "https://hooks.example.com/touchstone",
        "events": ["device.revoked", "user.created"],
        "description": "Fraud team",
    ]

    @Test func endpointsAreCreatedReadChangedRotatedAndDeleted() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let created = try await client.request(.post, "/v1/admin/webhooks", token: key, json: Self.hook)
            #expect(created.status == .created, "\(String(decoding: created.body, as: UTF8.self))")
            #expect(created.headers[.cacheControl] == "no-store")
            let id = try #require(created.value("id"))
            let secret = try #require(created.value("secret"))
            #expect(secret.hasPrefix("whsec_") && (Data(base64Encoded: String(secret.dropFirst(6)))?.count ?? 0) >= 24)
            #expect(created.any(["events"]) as? [String] == ["user.created", "device.revoked"])
            #expect(created.any(["enabled"]) as? Bool == true)

            let everything = try await client.request(.post, "/v1/admin/webhooks", token: key, json: ["url": "https://all.example.com/"])
            #expect(everything.any(["events"]) as? [String] == ["*"])

            let list = try await client.request(.get, "/v1/admin/webhooks", token: key)
            #expect((list.any(["endpoints"]) as? [Any])?.count == 2)
            #expect(!String(decoding: list.body, as: UTF8.self).contains(secret))
            let read = try await client.request(.get, "/v1/admin/webhooks/\(id)", token: key)
            #expect(read.value("description") == "Fraud team" && read.any(["secret"]) == nil)

            let changed = try await client.request(
                .patch, "/v1/admin/webhooks/\(id)", token: key,
                json: ["url": "https://other.example.com/x", "events": [] as [String], "description": "", "enabled": false])
            #expect(changed.status == .ok)
            #expect(changed.value("url") == "https://other.example.com/x" && changed.any(["events"]) as? [String] == ["*"])
            #expect(changed.any(["enabled"]) as? Bool == false && changed.value("description") == "")

            let rotated = try await client.request(.post, "/v1/admin/webhooks/\(id)/rotate-secret", token: key)
            #expect(rotated.status == .ok && rotated.headers[.cacheControl] == "no-store")
            #expect(rotated.value("secret")?.hasPrefix("whsec_") == true && rotated.value("secret") != secret)

            let types = try await client.request(.get, "/v1/admin/webhooks/event-types", token: key)
            let names = (types.any(["eventTypes"]) as? [[String: Any]])?.compactMap { $0["type"] as? String } ?? []
            #expect(names.contains("device.revoked") && names.contains("signing_key.rotated") && names.contains("webhook.test"))

            #expect(try await client.request(.delete, "/v1/admin/webhooks/\(id)", token: key).status == .noContent)
            #expect(try await client.request(.get, "/v1/admin/webhooks/\(id)", token: key).errorCode == "webhook_not_found")

            let events = try await client.request(.get, "/v1/admin/events?type=webhook.endpoint_created", token: key)
            let reasons = (events.any(["events"]) as? [[String: Any]])?.compactMap { $0["reason"] as? String } ?? []
            #expect(reasons.contains("admin:ops: endpoint \(id)") && reasons.count == 2)
            for type in ["webhook.endpoint_updated", "webhook.secret_rotated", "webhook.endpoint_deleted"] {
                let found = try await client.request(.get, "/v1/admin/events?type=\(type)", token: key)
                #expect((found.any(["events"]) as? [Any])?.count == 1, "\(type)")
            }
        }
    }

    @Test(arguments: [
        (["url": "http://hooks.example.com/"], "invalid_url"),
        (["url": "https://10.0.0.1/"], "invalid_url"),
        (["url": "https://localhost/"], "invalid_url"),
        (["url": "https://169.254.169.254/latest"], "invalid_url"),
        (["url": "https://hooks.example.com/", "events": ["device.exploded"]], "invalid_event_type"),
        (["url": "https://hooks.example.com/", "events": ["webhook.test"]], "invalid_event_type"),
        (["url": "https://hooks.example.com/", "description": String(repeating: "d", count: 501)], "invalid_description"),
        (["url": "https://hooks.example.com/", "description": "a\u{0007}b"], "invalid_request"),
        (["events": ["user.created"]], "invalid_request"),
        (["url": 7], "invalid_request"),
    ] as [([String: any Sendable], String)])
    func badEndpointsAreRefused(_ body: [String: any Sendable], _ code: String) async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let response = try await client.request(.post, "/v1/admin/webhooks", token: key, json: body)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == code, "\(String(decoding: response.body, as: UTF8.self))")
        }
    }

    @Test func unknownEndpointsAndEventsAreNotFound() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/admin/webhooks/wh_nope"), (.patch, "/v1/admin/webhooks/wh_nope"), (.delete, "/v1/admin/webhooks/wh_nope"),
                (.post, "/v1/admin/webhooks/wh_nope/rotate-secret"), (.post, "/v1/admin/webhooks/wh_nope/test"),
                (.get, "/v1/admin/webhooks/wh_nope/deliveries"), (.post, "/v1/admin/webhooks/wh_nope/deliveries/msg_x/retry"),
            ] {
                let response = try await client.request(method, path, token: key, json: method == .patch ? ["enabled": true] : nil)
                #expect(response.status == .notFound && response.errorCode == "webhook_not_found", "\(method) \(path)")
            }
            let id = try #require(try await client.request(.post, "/v1/admin/webhooks", token: key, json: Self.hook).value("id"))
            let missing = try await client.request(.post, "/v1/admin/webhooks/\(id)/deliveries/msg_nope/retry", token: key)
            #expect(missing.status == .notFound && missing.errorCode == "delivery_not_found")
            let badLimit = try await client.request(.get, "/v1/admin/webhooks/\(id)/deliveries?limit=0", token: key)
            #expect(badLimit.status == .badRequest && badLimit.errorCode == "invalid_request")
            _ = try await client.request(.patch, "/v1/admin/webhooks/\(id)", token: key, json: ["enabled": false])
            let disabled = try await client.request(.post, "/v1/admin/webhooks/\(id)/test", token: key)
            #expect(disabled.status == .conflict && disabled.errorCode == "webhook_disabled")
            // Without an admin key: the usual 401 / 403.
            #expect(try await client.request(.get, "/v1/admin/webhooks").status == .unauthorized)
            #expect(try await client.request(.get, "/v1/admin/webhooks", token: "not-a-key").errorCode == "admin_key_required")
            let noUser = try await client.request(.delete, "/v1/admin/users/nope", token: key)
            #expect(noUser.status == .notFound && noUser.errorCode == "user_not_found")
        }
    }
}

/// docs/webhooks.md describes every event type of the catalogue with every field of its `data`.
struct WebhookDocsTests {
    @Test func everyEventTypeAndFieldIsDocumented() throws {
        let text = try String(contentsOf: ConfigurationDocsTests.root.appendingPathComponent("docs/webhooks.md"), encoding: .utf8)
        for type in WebhookEventType.all + [WebhookEventType.test] {
            let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("| `\(type.name)` |") }, "\(type.name) has no row")
            for field in type.data.map(\.field) {
                #expect(row.contains("`\(field)`"), "\(type.name): \(field) is not documented")
            }
        }
    }
}
