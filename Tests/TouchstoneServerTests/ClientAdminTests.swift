import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting

/// `/v1/admin/clients` (issue #31, §1): the OpenID provider's clients through the admin API, with every error code.
struct ClientAdminTests {
    static let grafana: [String: any Sendable] = [
        "name": "Grafana",
        "redirectUris": ["https://grafana.example.com/login/generic_oauth"],
        "postLogoutRedirectUris": ["https://grafana.example.com/"],
        "backchannelLogoutUri": "https://grafana.example.com/backchannel",
    ]

    @Test func clientsAreCreatedListedRotatedAndDeleted() async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let created = try await client.request(.post, "/v1/admin/clients", token: key, json: Self.grafana)
            #expect(created.status == .created, "\(String(decoding: created.body, as: UTF8.self))")
            #expect(created.headers[.cacheControl] == "no-store")
            let id = try #require(created.value("clientId"))
            let secret = try #require(created.value("clientSecret"))
            #expect(secret.hasPrefix("tsc_"))
            #expect(created.any(["public"]) as? Bool == false)
            #expect(created.any(["redirectUris"]) as? [String] == ["https://grafana.example.com/login/generic_oauth"])

            var phone = ["name": "Phone app", "redirectUris": ["com.example.app:/cb"]] as [String: any Sendable]
            phone["public"] = true
            phone["firstParty"] = true
            let publicClient = try await client.request(.post, "/v1/admin/clients", token: key, json: phone)
            #expect(publicClient.status == .created)
            #expect(publicClient.any(["clientSecret"]) == nil)
            let publicId = try #require(publicClient.value("clientId"))

            let list = try await client.request(.get, "/v1/admin/clients", token: key)
            let clients = try #require(list.any(["clients"]) as? [[String: Any]])
            #expect(Set(clients.compactMap { $0["clientId"] as? String }) == [id, publicId])  // made at one instant of the test clock
            #expect(!String(decoding: list.body, as: UTF8.self).contains(secret))

            let rotated = try await client.request(.post, "/v1/admin/clients/\(id)/rotate-secret", token: key)
            #expect(rotated.status == .ok)
            #expect(rotated.value("clientSecret")?.hasPrefix("tsc_") == true && rotated.value("clientSecret") != secret)
            let noSecret = try await client.request(.post, "/v1/admin/clients/\(publicId)/rotate-secret", token: key)
            #expect(noSecret.status == .conflict)
            #expect(noSecret.errorCode == "public_client_has_no_secret")

            #expect(try await client.request(.delete, "/v1/admin/clients/\(id)", token: key).status == .noContent)
            let gone = try await client.request(.delete, "/v1/admin/clients/\(id)", token: key)
            #expect(gone.status == .notFound)
            #expect(gone.errorCode == "client_not_found")
            #expect(try await client.request(.post, "/v1/admin/clients/\(id)/rotate-secret", token: key).errorCode == "client_not_found")

            // Each change is audited with the admin key's name, and counted.
            let metrics = String(decoding: try await client.request(.get, "/metrics").body, as: UTF8.self)
            for type in ["oauth_client.created", "oauth_client.secret_rotated", "oauth_client.deleted"] {
                #expect(metrics.contains("touchstone_audit_events_total{type=\"\(type)\",outcome=\"success\"}"), "\(type)")
            }
            for type in ["oauth_client.created", "oauth_client.secret_rotated", "oauth_client.deleted"] {
                let events = try await client.request(.get, "/v1/admin/events?type=\(type)", token: key)
                let reasons = (events.any(["events"]) as? [[String: Any]])?.compactMap { $0["reason"] as? String } ?? []
                #expect(reasons.contains { $0.hasPrefix("admin:ops: client ") }, "\(type): \(reasons)")
            }
        }
    }

    @Test(arguments: [
        (["name": "App", "redirectUris": ["http://app.example.com/cb"]], "loopback"),
        (["name": "App", "redirectUris": ["https://app.example.com/cb#x"]], "fragment"),
        (["name": "App", "redirectUris": [] as [String]], "1 to 20 redirect URIs"),
        (["name": "App"], "1 to 20 redirect URIs"),
        (["name": "", "redirectUris": ["https://app.example.com/cb"]], "name"),
        (["name": "App\u{7}", "redirectUris": ["https://app.example.com/cb"]], "control"),
        (["name": "App", "redirectUris": ["https://app.example.com/cb"], "backchannelLogoutUri": "com.example.app:/x"], "back-channel"),
        (["name": "App", "redirectUris": ["https://app.example.com/cb"], "backchannelLogoutUri": "https.example.app:/x"], "back-channel"),
        (["name": "App", "redirectUris": Array(repeating: "https://app.example.com/cb", count: 21)], "more than 20"),
        (["name": "App", "redirectUris": "https://app.example.com/cb"], "wrong type"),
    ] as [([String: any Sendable], String)])
    func aBadRegistrationIs400WithTheReason(body: [String: any Sendable], says: String) async throws {
        try await TestServer.runWithAdminKey { client, key, _ in
            let response = try await client.request(.post, "/v1/admin/clients", token: key, json: body)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
            let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains(says), "\(message)")
        }
    }

    @Test func theAdminKeyIsRequired() async throws {
        try await TestServer.runWithAdminKey { client, _, _ in
            #expect(try await client.request(.get, "/v1/admin/clients").status == .unauthorized)
            let account = try await Flow(client: client).signUp()
            let withSession = try await client.request(.post, "/v1/admin/clients", token: account.token, json: Self.grafana)
            #expect(withSession.status == .forbidden)
            #expect(withSession.errorCode == "admin_key_required")
        }
    }
}
