import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneConfirmation
import TouchstoneServer
import TouchstoneTesting

/// OpenID CIBA in poll mode (issue #34): a client's backend asks, the phone approves with the binding message, the
/// client polls the token endpoint.
struct BackchannelAuthenticationTests {
    static let grant = "urn:openid:params:grant-type:ciba"

    static func run(
        _ customize: @escaping (inout TouchstoneConfiguration) -> Void = { _ in },
        clock: ManualClock = ManualClock(),
        _ body: @Sendable (Flow, OpenIDTestClient, String, ManualClock) async throws -> Void
    ) async throws {
        try await TestServer.runWithAdminKey(configuration: TestServer.configuration(customize), clock: clock) { client, key, _ in
            let app = try await client.registerClient(key: key, name: "Call centre", ciba: true)
            try await body(Flow(client: client), app, key, clock)
        }
    }

    static func authorize(_ flow: Flow, _ app: OpenIDTestClient, _ body: String) async throws -> JSONTestResponse {
        try await flow.client.form("/oauth2/bc-authorize", body, headers: app.headers)
    }

    static func poll(_ flow: Flow, _ app: OpenIDTestClient, _ authReqId: String) async throws -> JSONTestResponse {
        try await flow.client.form("/oauth2/token", "grant_type=\(Self.grant)&auth_req_id=\(authReqId)", headers: app.headers)
    }

    @Test func discoveryListsPollMode() async throws {
        try await Self.run { flow, _, _, _ in
            let metadata = try await flow.client.request(.get, "/.well-known/openid-configuration")
            #expect(metadata.value("backchannel_authentication_endpoint")?.hasSuffix("/oauth2/bc-authorize") == true)
            #expect(metadata.any(["backchannel_token_delivery_modes_supported"]) as? [String] == ["poll"])
            #expect(metadata.any(["backchannel_user_code_parameter_supported"]) as? Bool == false)
            #expect((metadata.any(["grant_types_supported"]) as? [String])?.contains(Self.grant) == true)
        }
    }

    @Test func anApprovalOnThePhoneGivesTheClientTokens() async throws {
        try await Self.run { flow, app, _, clock in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let started = try await Self.authorize(flow, app, "scope=openid%20email%20offline_access&login_hint=\(account.email)&binding_message=Pay%20%E2%82%AC20%20to%20Bob")
            #expect(started.status == .ok && started.headers[.cacheControl] == "no-store", "\(String(decoding: started.body, as: UTF8.self))")
            let authReqId = try #require(started.value("auth_req_id"))
            #expect(started.any(["expires_in"]) as? Int == 120 && started.any(["interval"]) as? Int == 5)

            let pending = try await Self.poll(flow, app, authReqId)
            #expect(pending.status == .badRequest && pending.value("error") == "authorization_pending")
            let tooSoon = try await Self.poll(flow, app, authReqId)
            #expect(tooSoon.status == .badRequest && tooSoon.value("error") == "slow_down")

            let listed = try await flow.pendingRequests(phone)
            let request = try #require(listed.first)
            #expect(request["client"] as? String == "Call centre" && (request["numbers"] as? [Int]) == [])
            let payload = try Flow.payload(request)
            #expect(payload.kind == "backchannel" && payload.bindingMessage == "Pay €20 to Bob" && payload.browser == nil)
            // A number is refused: the binding message is what the user checks.
            let withNumber = try await flow.approve(payload.requestId, phone, payload: payload, choice: 42)
            #expect(withNumber.status == .badRequest && withNumber.errorCode == "invalid_request")
            let approved = try await flow.approve(payload.requestId, phone, payload: payload, choice: nil)
            #expect(approved.status == .ok)

            clock.advance(by: 5)
            let tokens = try await Self.poll(flow, app, authReqId)
            #expect(tokens.status == .ok, "\(String(decoding: tokens.body, as: UTF8.self))")
            let idToken = jwtPayload(try #require(tokens.value("id_token")))
            #expect(idToken["sub"] as? String == account.userId && idToken["amr"] as? [String] == ["hwk", "user"])
            #expect(idToken["aud"] as? String == app.id && idToken["email"] as? String == account.email.lowercased())
            #expect(tokens.value("refresh_token") != nil && tokens.value("scope") == "openid email offline_access")
            let userinfo = try await flow.client.request(.get, "/oauth2/userinfo", token: try #require(tokens.value("access_token")))
            #expect(userinfo.status == .ok && userinfo.value("sub") == account.userId)
            // Once.
            clock.advance(by: 5)
            let again = try await Self.poll(flow, app, authReqId)
            #expect(again.status == .badRequest && again.value("error") == "invalid_grant")
        }
    }

    @Test func aDeclineIsAccessDeniedAndExpiryIsExpiredToken() async throws {
        try await Self.run { flow, app, _, clock in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let first = try await Self.authorize(flow, app, "scope=openid&login_hint=\(account.userId)&binding_message=first")
            let second = try await Self.authorize(flow, app, "scope=openid&login_hint=\(account.email.uppercased())&requested_expiry=30")
            #expect(second.any(["expires_in"]) as? Int == 30)
            let listed = try await flow.pendingRequests(phone)
            #expect(listed.count == 2)
            let payload = try Flow.payload(try #require(listed.first { ($0["payload"] as? [String: Any])?["bindingMessage"] as? String == "first" }))
            let declined = try await flow.decline(payload.requestId, phone, payload: payload, reason: .cancel)
            #expect(declined.status == .ok)
            let denied = try await Self.poll(flow, app, try #require(first.value("auth_req_id")))
            #expect(denied.status == .badRequest && denied.value("error") == "access_denied")
            let third = try await Self.authorize(flow, app, "scope=openid&login_hint=\(account.userId)&binding_message=third&requested_expiry=10")
            let thirdItem = try #require(try await flow.pendingRequests(phone).first { ($0["payload"] as? [String: Any])?["bindingMessage"] as? String == "third" })
            let thirdPayload = try Flow.payload(thirdItem)
            #expect(try await flow.approve(thirdPayload.requestId, phone, payload: thirdPayload, choice: nil).status == .ok)
            clock.advance(by: 31)
            let expired = try await Self.poll(flow, app, try #require(second.value("auth_req_id")))
            #expect(expired.status == .badRequest && expired.value("error") == "expired_token")
            // An approval the client did not collect within 30 seconds of the expiry is expired too.
            clock.advance(by: 10)
            let uncollected = try await Self.poll(flow, app, try #require(third.value("auth_req_id")))
            #expect(uncollected.status == .badRequest && uncollected.value("error") == "expired_token")
        }
    }

    @Test func badRequestsGetCIBAsErrors() async throws {
        try await Self.run { flow, app, key, _ in
            let account = try await flow.signUp()
            let cases: [(String, String)] = [
                ("scope=openid", "invalid_request"),
                ("scope=email&login_hint=\(account.email)", "invalid_scope"),
                ("scope=openid%20bogus&login_hint=\(account.email)", "invalid_scope"),
                ("scope=openid&login_hint=nobody@example.com", "unknown_user_id"),
                ("scope=openid&login_hint=no-such-id", "unknown_user_id"),
                ("scope=openid&id_token_hint=x", "invalid_request"),
                ("scope=openid&login_hint=\(account.email)&user_code=1234", "invalid_request"),
                ("scope=openid&login_hint=\(account.email)&binding_message=\(String(repeating: "x", count: 61))", "invalid_binding_message"),
                ("scope=openid&login_hint=\(account.email)&binding_message=a%0Ab", "invalid_request"),
                ("scope=openid&login_hint=\(account.email)&binding_message=a%E2%80%AEb", "invalid_binding_message"),
                ("scope=openid&login_hint=\(account.email)&requested_expiry=5", "invalid_request"),
                ("scope=openid&login_hint=\(account.email)&requested_expiry=abc", "invalid_request"),
            ]
            for (body, code) in cases {
                let response = try await Self.authorize(flow, app, body)
                #expect(response.status == .badRequest && response.value("error") == code, "\(body): \(String(decoding: response.body, as: UTF8.self))")
            }
            // A client not registered for CIBA, a public client, no authentication.
            let plain = try await flow.client.registerClient(key: key, name: "Web app")
            let unauthorized = try await flow.client.form("/oauth2/bc-authorize", "scope=openid&login_hint=\(account.email)", headers: plain.headers)
            #expect(unauthorized.status == .badRequest && unauthorized.value("error") == "unauthorized_client")
            let anonymous = try await flow.client.form(
                "/oauth2/bc-authorize", "scope=openid&login_hint=\(account.email)", headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(anonymous.status == .unauthorized && anonymous.value("error") == "invalid_client")
            // Unknown auth_req_id, or another client's.
            let unknown = try await Self.poll(flow, app, "nope")
            #expect(unknown.status == .badRequest && unknown.value("error") == "invalid_grant")
            let started = try await Self.authorize(flow, app, "scope=openid&login_hint=\(account.email)")
            let other = try await flow.client.registerClient(key: key, name: "Other", ciba: true)
            let stolen = try await Self.poll(flow, other, try #require(started.value("auth_req_id")))
            #expect(stolen.value("error") == "invalid_grant")
            // A public CIBA client cannot be registered.
            let publicCIBA = try await flow.client.request(
                .post, "/v1/admin/clients", token: key, json: ["name": "x", "redirectUris": [String](), "public": true, "ciba": true])
            #expect(publicCIBA.status == .badRequest && publicCIBA.errorCode == "invalid_request")
            let noRedirect = try await flow.client.request(.post, "/v1/admin/clients", token: key, json: ["name": "backend", "redirectUris": [String](), "ciba": true])
            #expect(noRedirect.status == .created && noRedirect.any(["ciba"]) as? Bool == true)
        }
    }

    @Test func pausedApprovalsAreAccessDenied() async throws {
        try await Self.run({ $0.phoneApproval.lockOnNotMe = true }) { flow, app, _, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            _ = try await Self.authorize(flow, app, "scope=openid&login_hint=\(account.email)")
            let listed = try await flow.pendingRequests(phone)
            let payload = try Flow.payload(try #require(listed.first))
            _ = try await flow.decline(payload.requestId, phone, payload: payload, reason: .notMe)
            let paused = try await Self.authorize(flow, app, "scope=openid&login_hint=\(account.email)")
            #expect(paused.status == .forbidden && paused.value("error") == "access_denied")
        }
    }
}
