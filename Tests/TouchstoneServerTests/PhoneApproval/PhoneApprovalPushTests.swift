import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import Crypto
import TouchstoneConfirmation
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// Apple push of new requests (issue #34), to a local HTTP/2 stand-in for Apple's service.
struct PhoneApprovalPushTests {
    @Test func aRequestIsPushedToTheAccountsPhonesAndADeadTokenIsForgotten() async throws {
        let apple = try await TestAPNsServer.start()
        defer { apple.stop() }
        let key = P256.Signing.PrivateKey()
        var settings = APNsSettings(keyPEM: key.pemRepresentation, keyId: "ABC123DEFG", teamId: "TEAM123456", topic: "com.example.bank",
            environment: .development, baseURL: apple.url)
        settings.trustRootsPEM = apple.certificatePEM
        try await PhoneApprovalTests.run({ $0.phoneApproval.apns = settings }) { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let token = String(repeating: "0a1b", count: 16)
            let registered = try await flow.client.request(
                .put, "/v1/biometrics/registrations/\(phone.registrationId)/push-token", json: ["platform": "apns", "token": token.uppercased()],
                headers: phone.authorization)
            #expect(registered.status == .noContent)
            let created = try await flow.requestSignIn(["email": account.email])
            let requestId = try #require(created.value("requestId"))
            #expect(await apple.waitForRequests(1))
            let push = try #require(apple.received.first)
            #expect(push.http2 && push.deviceToken == token && push.headers["apns-topic"] == "com.example.bank")
            #expect(push.headers["apns-collapse-id"] == requestId && push.headers["apns-push-type"] == "alert")
            #expect(push.json["requestId"] as? String == requestId && push.json["registrationId"] as? String == phone.registrationId)
            // Nothing secret travels through Apple.
            let body = String(decoding: push.body, as: UTF8.self)
            for secret in [try #require(created.value("pollToken")), phone.credential] { #expect(!body.contains(secret)) }
            // An address without an account pushes nothing; Apple's "Unregistered" makes the server forget the token.
            _ = try await flow.requestSignIn(["email": "nobody@example.com"])
            apple.answer(410, reason: "Unregistered")
            _ = try await flow.requestSignIn(["email": account.email])
            #expect(await apple.waitForRequests(2))
            var counted = false
            for _ in 0..<400 where !counted {
                let metrics = try await flow.client.request(.get, "/metrics")
                counted = String(decoding: metrics.body, as: UTF8.self).contains(#"touchstone_push_notifications_total{outcome="token_invalid"} 1"#)
                if !counted { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(counted)
            // A second phone: the next request goes to its token only (the first phone's, listed first, is gone).
            let second = try await flow.enrollPhone(account.token)
            let secondToken = String(repeating: "cd", count: 32)
            _ = try await flow.client.request(
                .put, "/v1/biometrics/registrations/\(second.registrationId)/push-token", json: ["platform": "apns", "token": secondToken],
                headers: second.authorization)
            _ = try await flow.requestSignIn(["email": account.email])
            #expect(await apple.waitForRequests(3))
            #expect(apple.received.map(\.deviceToken) == [token, token, secondToken])
        }
    }
}

/// The phone-approval settings refuse what cannot work.
struct PhoneApprovalSettingsTests {
    @Test(arguments: [
        ["TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS": "9"],
        ["TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS": "601"],
        ["TOUCHSTONE_PHONE_APPROVAL_LOCK_ON_NOT_ME": "maybe"],
        ["TOUCHSTONE_APNS_KEY_ID": "ABC123DEFG"],
        ["TOUCHSTONE_APNS_KEY_FILE": "/nonexistent/key.p8", "TOUCHSTONE_APNS_KEY_ID": "ABC123DEFG", "TOUCHSTONE_APNS_TEAM_ID": "TEAM123456",
         "TOUCHSTONE_APNS_TOPIC": "com.example.bank"],
    ])
    func invalidSettingsAreRefused(environment: [String: String]) {
        #expect(throws: ConfigurationError.self) { try TouchstoneConfiguration(environment: environment) }
    }

    @Test func theDefaultsAndACompleteAPNsSetting() throws {
        let defaults = try TouchstoneConfiguration(environment: [:])
        #expect(defaults.phoneApproval.requestTTL == 120 && !defaults.phoneApproval.lockOnNotMe && defaults.phoneApproval.apns == nil)
        let file = TemporaryFiles.path("apns", suffix: ".p8")
        defer { TemporaryFiles.remove(file) }
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: file, atomically: true, encoding: .utf8)
        let configured = try TouchstoneConfiguration(environment: [
            "TOUCHSTONE_APNS_KEY_FILE": file, "TOUCHSTONE_APNS_KEY_ID": "ABC123DEFG", "TOUCHSTONE_APNS_TEAM_ID": "TEAM123456",
            "TOUCHSTONE_APNS_TOPIC": "com.example.bank", "TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS": "60",
            "TOUCHSTONE_PHONE_APPROVAL_LOCK_ON_NOT_ME": "on",
        ])
        #expect(configured.phoneApproval.apns?.url == "https://api.push.apple.com" && configured.phoneApproval.apns?.topic == "com.example.bank")
        #expect(configured.phoneApproval.requestTTL == 60 && configured.phoneApproval.lockOnNotMe)
    }
}
