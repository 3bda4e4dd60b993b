import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// Token buckets per address (in memory) and per account (in the database), password throttling, and which
/// forwarded addresses are believed.
struct RateLimitTests {
    static func configuration(_ customize: @escaping (inout TouchstoneConfiguration) -> Void) -> TouchstoneConfiguration {
        TestServer.configuration {
            $0.rateLimits.enabled = true
            customize(&$0)
        }
    }

    @Test func theAddressLimitAnswers429WithRetryAfterAndRefills() async throws {
        let clock = ManualClock()
        let configuration = Self.configuration { $0.rateLimits.perAddress = RateLimit(capacity: 3, interval: 10) }
        // Live: the peer address is the loopback address.
        try await TestServer.run(.live, configuration: configuration, clock: clock) { client in
            for _ in 0..<3 {
                let response = try await client.request(.post, "/v1/sessions", json: ["email": "a@example.com", "password": "x"])
                #expect(response.errorCode == "invalid_credentials")
            }
            let limited = try await client.request(.post, "/v1/sessions", json: ["email": "a@example.com", "password": "x"])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] == "10")
            // Another endpoint group has its own bucket.
            #expect(try await client.request(.post, "/v1/biometrics/authentications/start", json: ["registrationId": "x"]).errorCode
                == "registration_not_found")
            clock.advance(by: 10)
            let again = try await client.request(.post, "/v1/sessions", json: ["email": "a@example.com", "password": "x"])
            #expect(again.errorCode == "invalid_credentials")
        }
    }

    static func attempt(_ client: any TestClientProtocol, from address: String) async throws -> String? {
        try await client.request(
            .post,
            "/v1/sessions",
            json: ["email": "a@example.com", "password": "x"],
            headers: [HTTPField.Name("X-Forwarded-For")!: address]
        ).errorCode
    }

    @Test func forwardedAddressesCountOnlyFromTrustedProxies() async throws {
        let trusted = Self.configuration {
            $0.rateLimits.perAddress = RateLimit(capacity: 1, interval: 60)
            $0.rateLimits.trustedProxies = ["127.0.0.1"]
        }
        try await TestServer.run(.live, configuration: trusted) { client in
            let first = try await Self.attempt(client, from: "203.0.113.1")
            let other = try await Self.attempt(client, from: "203.0.113.2")  // another client, another bucket
            let second = try await Self.attempt(client, from: "203.0.113.1")
            #expect([first, other, second] == ["invalid_credentials", "invalid_credentials", "rate_limited"])
        }
        let untrusted = Self.configuration { $0.rateLimits.perAddress = RateLimit(capacity: 1, interval: 60) }
        try await TestServer.run(.live, configuration: untrusted) { client in
            let first = try await Self.attempt(client, from: "203.0.113.1")
            // The header is ignored: both come from 127.0.0.1.
            let second = try await Self.attempt(client, from: "203.0.113.2")
            #expect([first, second] == ["invalid_credentials", "rate_limited"])
        }
    }

    @Test func forwardedForResolution() {
        let proxies: Set<String> = ["10.0.0.1", "10.0.0.2"]
        #expect(ClientInfo.resolveAddress(peer: "198.51.100.7", forwardedFor: ["1.2.3.4"], trustedProxies: proxies) == "198.51.100.7")
        #expect(ClientInfo.resolveAddress(peer: "10.0.0.1", forwardedFor: ["1.2.3.4"], trustedProxies: proxies) == "1.2.3.4")
        // A client-supplied entry to the left of the real one is ignored; trusted hops on the right are skipped.
        #expect(
            ClientInfo.resolveAddress(peer: "10.0.0.1", forwardedFor: ["6.6.6.6, 1.2.3.4, 10.0.0.2"], trustedProxies: proxies)
                == "1.2.3.4"
        )
        #expect(ClientInfo.resolveAddress(peer: "10.0.0.1", forwardedFor: [], trustedProxies: proxies) == "10.0.0.1")
        #expect(ClientInfo.resolveAddress(peer: nil, forwardedFor: ["1.2.3.4"], trustedProxies: proxies) == nil)
    }

    @Test func theAccountLimitHoldsPerRegistration() async throws {
        let configuration = Self.configuration { $0.rateLimits.perAccount = RateLimit(capacity: 2, interval: 60) }
        try await TestServer.run(configuration: configuration) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let id = try await flow.enroll(account.token, TestDeviceKey(.es256))
            #expect(try await flow.startLogin(id).status == .ok)
            #expect(try await flow.startLogin(id).status == .ok)
            let limited = try await flow.startLogin(id)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] == "60")
            // The refusal is in the owner's audit trail.
            let events = try await flow.events(account.token)
            #expect(events.first?["type"] as? String == "rate_limited")
            #expect(events.first?["registrationId"] as? String == id)
        }
    }

    static func signIn(_ client: any TestClientProtocol, _ email: String, _ password: String) async throws -> JSONTestResponse {
        try await client.request(.post, "/v1/sessions", json: ["email": email, "password": password])
    }

    @Test func repeatedWrongPasswordsThrottleTheAccount() async throws {
        let clock = ManualClock()
        let configuration = Self.configuration {
            $0.rateLimits.loginFailureThreshold = 3
            $0.rateLimits.loginBaseDelay = 30
        }
        try await TestServer.run(configuration: configuration, clock: clock) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            for _ in 0..<3 { #expect(try await Self.signIn(client, account.email, "wrong password").errorCode == "invalid_credentials") }
            // Throttled: even the right password waits.
            let throttled = try await Self.signIn(client, account.email, Flow.password)
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.errorCode == "login_throttled")
            #expect(throttled.headers[.retryAfter] == "30")
            clock.advance(by: 31)
            // One more failure doubles the wait.
            #expect(try await Self.signIn(client, account.email, "wrong password").errorCode == "invalid_credentials")
            #expect(try await Self.signIn(client, account.email, Flow.password).headers[.retryAfter] == "60")
            clock.advance(by: 61)
            #expect(try await Self.signIn(client, account.email, Flow.password).status == .ok)
            // Success clears the count.
            #expect(try await Self.signIn(client, account.email, "wrong password").errorCode == "invalid_credentials")
            #expect(try await Self.signIn(client, account.email, Flow.password).status == .ok)
            // An unknown email is throttled the same way, so throttling reveals nothing about which accounts exist.
            for _ in 0..<3 {
                _ = try await client.request(.post, "/v1/sessions", json: ["email": "ghost@example.com", "password": "x"])
            }
            let ghost = try await client.request(.post, "/v1/sessions", json: ["email": "ghost@example.com", "password": "x"])
            #expect(ghost.errorCode == "login_throttled")
        }
    }

    @Test func limitsAreOffUnlessTurnedOn() async throws {
        try await TestServer.run { client in
            for _ in 0..<50 {
                let response = try await client.request(.post, "/v1/sessions", json: ["email": "a@example.com", "password": "x"])
                #expect(response.errorCode == "invalid_credentials")
            }
        }
    }

    @Test func rateLimitSettingsParse() throws {
        #expect(RateLimit("60/minute") == RateLimit(capacity: 60, interval: 1))
        #expect(RateLimit("5/s") == RateLimit(capacity: 5, interval: 0.2))
        #expect(RateLimit("10/hour") == RateLimit(capacity: 10, interval: 360))
        #expect(RateLimit("0/minute") == nil)
        #expect(RateLimit("ten/minute") == nil)
        #expect(RateLimit("10/fortnight") == nil)
        #expect(RateLimit("300/5m") == RateLimit(capacity: 300, interval: 1))
        let configuration = try TouchstoneConfiguration(environment: [
            "TOUCHSTONE_RATE_LIMITS": "off", "TOUCHSTONE_RATE_LIMIT_PER_ADDRESS": "100/minute",
            "TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT": "5/minute", "TOUCHSTONE_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2",
            "TOUCHSTONE_LOGIN_FAILURE_THRESHOLD": "7", "TOUCHSTONE_PIN_MAX_ATTEMPTS": "4", "TOUCHSTONE_AUDIT_RETENTION_DAYS": "90",
        ])
        #expect(configuration.auditRetention == .seconds(90 * 86_400))
        #expect(try TouchstoneConfiguration(environment: ["TOUCHSTONE_AUDIT_RETENTION_DAYS": "0"]).auditRetention == nil)
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_AUDIT_RETENTION_DAYS": "-1"]) }
        #expect(configuration.rateLimits.enabled == false)
        #expect(configuration.rateLimits.perAddress.capacity == 100)
        #expect(configuration.rateLimits.perAccount.capacity == 5)
        #expect(configuration.rateLimits.trustedProxies == ["10.0.0.1", "10.0.0.2"])
        #expect(configuration.rateLimits.loginFailureThreshold == 7)
        #expect(configuration.pinMaxAttempts == 4)
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: ["TOUCHSTONE_RATE_LIMITS": "maybe"]) }
        #expect(throws: ConfigurationError.self) {
            try TouchstoneConfiguration(environment: ["TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT": "5"])
        }
    }
}
