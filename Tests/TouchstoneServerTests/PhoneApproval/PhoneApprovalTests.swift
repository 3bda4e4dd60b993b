import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import Crypto
import TouchstoneConfirmation
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// A phone of the account, as the tests drive it: its key, registration and device credential.
struct TestPhone {
    var device: TestDeviceKey
    var registrationId: String
    var credential: String

    var authorization: HTTPFields { [.authorization: "Device \(self.registrationId):\(self.credential)"] }

    /// The decision's signature, base64url, over `payload` (as the server gave it) and the decision.
    func sign(_ payload: SignInApproval.Payload, _ decision: SignInApproval.Decision) -> String {
        Base64.urlEncode(self.device.signature(overBytes: payload.signedBytes(decision)))
    }
}

extension Flow {
    /// Enrols a phone and returns it with the device credential enrolment answered.
    func enrollPhone(_ token: String, _ device: TestDeviceKey = TestDeviceKey(.es256)) async throws -> TestPhone {
        let start = try await self.startRegistration(token, device)
        let id = try #require(start.value("registrationId"))
        let finish = try await self.finishRegistration(token, id, signature: device.signed(try #require(start.value("challenge"))))
        try #require(finish.status == .created)
        #expect(finish.headers[.cacheControl] == "no-store")
        return TestPhone(device: device, registrationId: id, credential: try #require(finish.value("deviceCredential")))
    }

    /// A browser's request.
    func requestSignIn(_ body: [String: any Sendable] = [:], userAgent: String = "TestBrowser/1.0") async throws -> JSONTestResponse {
        try await self.client.request(.post, "/v1/sign-in-requests", json: body, headers: [.userAgent: userAgent])
    }

    /// The phone's pending requests.
    func pendingRequests(_ phone: TestPhone) async throws -> [[String: Any]] {
        let response = try await self.client.request(.get, "/v1/sign-in-requests/pending", headers: phone.authorization)
        try #require(response.status == .ok, "\(String(decoding: response.body, as: UTF8.self))")
        return try #require(response.json["requests"] as? [[String: Any]])
    }

    /// ``pendingRequests(_:)``, empty when the read fails (the caller's #require says so).
    func pendingRequestsOrEmpty(_ phone: TestPhone) async -> [[String: Any]] {
        (try? await self.pendingRequests(phone)) ?? []
    }

    /// The payload of a request as the phone read it.
    static func payload(_ request: [String: Any]) throws -> SignInApproval.Payload {
        let data = try JSONSerialization.data(withJSONObject: try #require(request["payload"]))
        return try JSONDecoder().decode(SignInApproval.Payload.self, from: data)
    }

    func approve(_ requestId: String, _ phone: TestPhone, payload: SignInApproval.Payload, choice: Int?) async throws -> JSONTestResponse {
        try await self.client.request(
            .post, "/v1/sign-in-requests/\(requestId)/approve",
            json: [
                "registrationId": phone.registrationId, "choice": choice.map { $0 as any Sendable } ?? NSNull(),
                "signature": phone.sign(payload, .approve(choice: choice)),
            ])
    }

    func decline(_ requestId: String, _ phone: TestPhone, payload: SignInApproval.Payload, reason: SignInApproval.DeclineReason) async throws
        -> JSONTestResponse
    {
        try await self.client.request(
            .post, "/v1/sign-in-requests/\(requestId)/decline",
            json: ["registrationId": phone.registrationId, "reason": reason.rawValue, "signature": phone.sign(payload, .decline(reason))])
    }

    func pollSignIn(_ requestId: String, _ pollToken: String, wait: Int? = nil) async throws -> JSONTestResponse {
        try await self.client.request(.get, "/v1/sign-in-requests/\(requestId)" + (wait.map { "?wait=\($0)" } ?? ""), token: pollToken)
    }
}

/// Sign-in on a computer approved on the phone (issue #34), through the server.
struct PhoneApprovalTests {
    static func run(
        _ customize: @escaping (inout TouchstoneConfiguration) -> Void = { _ in },
        clock: ManualClock = ManualClock(),
        _ body: @Sendable (Flow, ManualClock) async throws -> Void
    ) async throws {
        try await TestServer.run(configuration: TestServer.configuration(customize), clock: clock) { client in
            try await body(Flow(client: client), clock)
        }
    }

    @Test func theRightNumberApprovesAndTheFirstPollGetsTheOneSession() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let created = try await flow.requestSignIn(["email": account.email])
            #expect(created.status == .created && created.headers[.cacheControl] == "no-store")
            let requestId = try #require(created.value("requestId"))
            let pollToken = try #require(created.value("pollToken"))
            let number = try #require(created.any(["number"]) as? Int)
            #expect((10...99).contains(number))
            let expiresAt = try #require(created.value("expiresAt"))
            #expect(expiresAt.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
            let qr = try #require(created.value("qr"))
            #expect(qr.hasPrefix("touchstone://sign-in?request=\(requestId)&secret=") && qr.contains("&server=http"))
            #expect(created.value("qrSvg")?.hasPrefix("<svg") == true)

            let pending = try await flow.pendingRequests(phone)
            let request = try #require(pending.first)
            #expect(pending.count == 1 && request["requestId"] as? String == requestId && request["client"] as? String == "Touchstone")
            let numbers = try #require(request["numbers"] as? [Int])
            #expect(numbers.count == 3 && Set(numbers).count == 3 && numbers.contains(number) && numbers.allSatisfy { (10...99).contains($0) })
            let payload = try Flow.payload(request)
            #expect(payload.requestId == requestId && payload.userId == account.userId && payload.kind == "sign_in" && payload.rpId == "localhost")
            #expect(payload.browser?.userAgent == "TestBrowser/1.0" && payload.expiresAt == expiresAt && payload.version == 1)
            // The payload as served is exactly the signed members but the decision.
            let servedPayload = try #require(request["payload"])
            let served = try #require(try JSONSerialization.jsonObject(with: JSONSerialization.data(withJSONObject: servedPayload)) as? [String: Any])
            #expect(Set(served.keys) == ["browser", "client", "expiresAt", "kind", "requestId", "rpId", "userId", "version"])

            let waiting = try await flow.pollSignIn(requestId, pollToken)
            #expect(waiting.status == .ok && waiting.value("status") == "pending" && waiting.any(["session"]) == nil)

            let approved = try await flow.approve(requestId, phone, payload: payload, choice: number)
            #expect(approved.status == .ok && approved.value("signInRequest", "status") == "approved")
            let first = try await flow.pollSignIn(requestId, pollToken)
            #expect(first.value("status") == "approved" && first.any(["session", "methods"]) as? [String] == ["phone_approval"])
            #expect(first.value("user", "id") == account.userId)
            let token = try #require(first.value("session", "token"))
            let me = try await flow.client.request(.get, "/v1/session", token: token)
            #expect(me.status == .ok)
            let second = try await flow.pollSignIn(requestId, pollToken)
            #expect(second.value("status") == "approved" && second.any(["session"]) == nil)

            // Replay of the approval, and the request is no longer pending on the phone.
            let replay = try await flow.approve(requestId, phone, payload: payload, choice: number)
            #expect(replay.status == .conflict && replay.errorCode == "sign_in_request_not_pending")
            #expect(try await flow.pendingRequests(phone).isEmpty)
            let types = try await flow.events(account.token).compactMap { $0["type"] as? String }
            #expect(types.contains("sign_in_request.created") && types.contains("sign_in_request.approved") && types.contains("phone_approval_login"))
        }
    }

    @Test func aWrongNumberDeclinesTheRequest() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let created = try await flow.requestSignIn(["email": account.email])
            let requestId = try #require(created.value("requestId"))
            let number = try #require(created.any(["number"]) as? Int)
            let request = try #require(await flow.pendingRequestsOrEmpty(phone).first)
            let wrong = try #require((request["numbers"] as? [Int])?.first { $0 != number })
            let answer = try await flow.approve(requestId, phone, payload: try Flow.payload(request), choice: wrong)
            #expect(answer.status == .conflict && answer.errorCode == "wrong_number")
            let poll = try await flow.pollSignIn(requestId, try #require(created.value("pollToken")))
            #expect(poll.value("status") == "declined")
            let right = try await flow.approve(requestId, phone, payload: try Flow.payload(request), choice: number)
            #expect(right.errorCode == "sign_in_request_not_pending")
            let types = try await flow.events(account.token).compactMap { $0["type"] as? String }
            #expect(types.contains("sign_in_request.wrong_number"))
        }
    }

    @Test func notMeDeclinesAndWithTheSettingPausesTheAccountsPhoneApprovals() async throws {
        try await Self.run({ $0.phoneApproval.lockOnNotMe = true }) { flow, clock in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let earlier = try await flow.requestSignIn(["email": account.email])
            let created = try await flow.requestSignIn(["email": account.email])
            let requestId = try #require(created.value("requestId"))
            let earlierId = try #require(earlier.value("requestId"))
            let listed = try await flow.pendingRequests(phone)
            let request = try #require(listed.first { $0["requestId"] as? String == requestId })
            let earlierRequest = try #require(listed.first { $0["requestId"] as? String == earlierId })
            let declined = try await flow.decline(requestId, phone, payload: try Flow.payload(request), reason: .notMe)
            #expect(declined.status == .ok && declined.value("signInRequest", "status") == "declined")
            #expect(try await flow.pollSignIn(requestId, try #require(created.value("pollToken"))).value("status") == "declined")
            // Paused: a request made before cannot be approved any more, nor read by its QR code.
            let earlierNumber = try #require(earlier.any(["number"]) as? Int)
            let paused = try await flow.approve(earlierId, phone, payload: try Flow.payload(earlierRequest), choice: earlierNumber)
            #expect(paused.status == .forbidden && paused.errorCode == "phone_approval_paused")
            let qr = try #require(earlier.value("qr"))
            let secret = try #require(URLComponents(string: qr)?.queryItems?.first { $0.name == "secret" }?.value)
            let scanned = try await flow.client.request(.get, "/v1/sign-in-requests/\(earlierId)?secret=\(secret)", headers: phone.authorization)
            #expect(scanned.status == .forbidden && scanned.errorCode == "phone_approval_paused")
            // The next request is answered as usual, and no phone sees it.
            let next = try await flow.requestSignIn(["email": account.email])
            #expect(next.status == .created)
            #expect(try await flow.pendingRequests(phone).isEmpty)
            let types = try await flow.events(account.token).compactMap { $0["type"] as? String }
            #expect(types.contains("sign_in_request.not_me"))
            // An hour later, phones see requests again.
            clock.advance(by: 3601)
            _ = try await flow.requestSignIn(["email": account.email])
            #expect(try await flow.pendingRequests(phone).count == 1)
        }
    }

    @Test func cancelDeclinesWithoutPausing() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let created = try await flow.requestSignIn(["email": account.email])
            let request = try #require(await flow.pendingRequestsOrEmpty(phone).first)
            let declined = try await flow.decline(try #require(created.value("requestId")), phone, payload: try Flow.payload(request), reason: .cancel)
            #expect(declined.status == .ok)
            _ = try await flow.requestSignIn(["email": account.email])
            #expect(try await flow.pendingRequests(phone).count == 1)
        }
    }

    @Test func aBadSignatureDecidesNothingAndCountsTowardTheLockout() async throws {
        try await Self.run({ $0.lockoutThreshold = 2 }) { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let first = try await flow.requestSignIn(["email": account.email])
            let second = try await flow.requestSignIn(["email": account.email])
            let pending = try await flow.pendingRequests(phone)
            #expect(pending.count == 2)
            let payloadA = try Flow.payload(try #require(pending.first { $0["requestId"] as? String == first.value("requestId") }))
            // A signature over the first request's payload, sent for the second: refused.
            let numberB = try #require(second.any(["number"]) as? Int)
            let crossed = try await flow.client.request(
                .post, "/v1/sign-in-requests/\(try #require(second.value("requestId")))/approve",
                json: ["registrationId": phone.registrationId, "choice": numberB, "signature": phone.sign(payloadA, .approve(choice: numberB))])
            #expect(crossed.status == .badRequest && crossed.errorCode == "invalid_signature")
            #expect(try await flow.pollSignIn(try #require(second.value("requestId")), try #require(second.value("pollToken"))).value("status") == "pending")
            // A signature over another decision (approve with another number than sent).
            let numberA = try #require(first.any(["number"]) as? Int)
            let mismatched = try await flow.client.request(
                .post, "/v1/sign-in-requests/\(try #require(first.value("requestId")))/approve",
                json: ["registrationId": phone.registrationId, "choice": numberA, "signature": phone.sign(payloadA, .decline(.cancel))])
            #expect(mismatched.errorCode == "invalid_signature")
            // Two failures reached the threshold: the registration is locked and can no longer read or approve.
            let locked = try await flow.client.request(.get, "/v1/sign-in-requests/pending", headers: phone.authorization)
            #expect(locked.status.code == 423 && locked.errorCode == "registration_locked")
            let approve = try await flow.approve(try #require(first.value("requestId")), phone, payload: payloadA, choice: numberA)
            #expect(approve.status.code == 423 && approve.errorCode == "registration_locked")
            // Nor get a new device credential.
            let renewed = try await flow.client.request(.post, "/v1/biometrics/registrations/\(phone.registrationId)/device-credential", token: account.token)
            #expect(renewed.status.code == 423 && renewed.errorCode == "registration_locked")
        }
    }

    @Test func anExpiredRequestIsFinal() async throws {
        try await Self.run({ $0.phoneApproval.requestTTL = 30 }) { flow, clock in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let created = try await flow.requestSignIn(["email": account.email])
            let request = try #require(await flow.pendingRequestsOrEmpty(phone).first)
            clock.advance(by: 31)
            let requestId = try #require(created.value("requestId"))
            #expect(try await flow.pollSignIn(requestId, try #require(created.value("pollToken"))).value("status") == "expired")
            #expect(try await flow.pendingRequests(phone).isEmpty)
            let late = try await flow.approve(requestId, phone, payload: try Flow.payload(request), choice: try #require(created.any(["number"]) as? Int))
            #expect(late.status == .gone && late.errorCode == "sign_in_request_expired")
            // An approval not collected within 30 seconds of the expiry gives no session.
            let second = try await flow.requestSignIn(["email": account.email])
            let secondRequest = try #require(try await flow.pendingRequests(phone).first { $0["requestId"] as? String == second.value("requestId") })
            let approved = try await flow.approve(
                try #require(second.value("requestId")), phone, payload: try Flow.payload(secondRequest), choice: try #require(second.any(["number"]) as? Int))
            #expect(approved.status == .ok)
            clock.advance(by: 61)
            let uncollected = try await flow.pollSignIn(try #require(second.value("requestId")), try #require(second.value("pollToken")))
            #expect(uncollected.value("status") == "approved" && uncollected.any(["session"]) == nil)
        }
    }

    @Test func unknownAddressesGetTheSameAnswerAndTheSameLimitOfThreePending() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            _ = try await flow.enrollPhone(account.token)
            for email in [account.email, "nobody-\(UUID().uuidString.prefix(6))@example.com"] {
                var keys: Set<String>?
                for _ in 0..<3 {
                    let created = try await flow.requestSignIn(["email": email])
                    #expect(created.status == .created)
                    let names = Set(created.json.keys)
                    #expect(keys == nil || keys == names)
                    keys = names
                }
                let fourth = try await flow.requestSignIn(["email": email.uppercased()])
                #expect(fourth.status == .tooManyRequests && fourth.errorCode == "too_many_pending_requests", "\(email)")
            }
        }
    }

    @Test func aScannedRequestBindsToTheFirstPhoneThatReadsIt() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let other = try await flow.enrollPhone(try await flow.signUp().token)
            let created = try await flow.requestSignIn()
            let requestId = try #require(created.value("requestId"))
            let qrText = try #require(created.value("qr"))
            let qr = try #require(URLComponents(string: qrText))
            let secret = try #require(qr.queryItems?.first { $0.name == "secret" }?.value)
            #expect(try await flow.pendingRequests(phone).isEmpty)
            let wrong = try await flow.client.request(.get, "/v1/sign-in-requests/\(requestId)?secret=\(secret.first == "x" ? "y" : "x")\(secret.dropFirst())", headers: phone.authorization)
            #expect(wrong.status == .notFound && wrong.errorCode == "sign_in_request_not_found")
            let missing = try await flow.client.request(.get, "/v1/sign-in-requests/\(requestId)", headers: phone.authorization)
            #expect(missing.status == .badRequest && missing.errorCode == "invalid_request")
            let read = try await flow.client.request(.get, "/v1/sign-in-requests/\(requestId)?secret=\(secret)", headers: phone.authorization)
            #expect(read.status == .ok && read.value("requestId") == requestId)
            let payload = try Flow.payload(read.json)
            #expect(payload.userId == account.userId)
            // Bound now: the other account's phone gets nothing, and this phone's list shows it.
            let stolen = try await flow.client.request(.get, "/v1/sign-in-requests/\(requestId)?secret=\(secret)", headers: other.authorization)
            #expect(stolen.status == .notFound)
            #expect(try await flow.pendingRequests(phone).count == 1)
            let approved = try await flow.approve(requestId, phone, payload: payload, choice: try #require(created.any(["number"]) as? Int))
            #expect(approved.status == .ok)
            let otherTry = try await flow.approve(requestId, other, payload: payload, choice: try #require(created.any(["number"]) as? Int))
            #expect(otherTry.errorCode == "sign_in_request_not_pending")
        }
    }

    @Test func aRequestForAnUnknownAddressIsNeverShownEvenWhenScanned() async throws {
        try await Self.run { flow, _ in
            let phone = try await flow.enrollPhone(try await flow.signUp().token)
            let created = try await flow.requestSignIn(["email": "nobody@example.com"])
            let requestId = try #require(created.value("requestId"))
            let qr = try #require(created.value("qr"))
            let secret = try #require(URLComponents(string: qr)?.queryItems?.first { $0.name == "secret" }?.value)
            let read = try await flow.client.request(.get, "/v1/sign-in-requests/\(requestId)?secret=\(secret)", headers: phone.authorization)
            #expect(read.status == .notFound)
        }
    }

    @Test func theDeviceCredentialAuthenticatesOnlyItsRegistration() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let none = try await flow.client.request(.get, "/v1/sign-in-requests/pending")
            #expect(none.status == .unauthorized && none.errorCode == "unauthenticated")
            for header in ["Device \(phone.registrationId):wrong", "Device \(phone.registrationId)", "Device :x", "Device nobody:\(phone.credential)"] {
                let response = try await flow.client.request(.get, "/v1/sign-in-requests/pending", headers: [.authorization: header])
                #expect(response.status == .unauthorized && response.errorCode == "invalid_device_credential", "\(header)")
            }
            // Push token: the registration's own only; a hex token.
            let push = try await flow.client.request(
                .put, "/v1/biometrics/registrations/\(phone.registrationId)/push-token", json: ["platform": "apns", "token": String(repeating: "ab", count: 32)],
                headers: phone.authorization)
            #expect(push.status == .noContent)
            for body: [String: any Sendable] in [["platform": "fcm", "token": "abab"], ["platform": "apns", "token": "xyz"], ["platform": "apns"]] {
                let bad = try await flow.client.request(.put, "/v1/biometrics/registrations/\(phone.registrationId)/push-token", json: body, headers: phone.authorization)
                #expect(bad.status == .badRequest && bad.errorCode == "invalid_request")
            }
            let other = try await flow.enrollPhone(account.token)
            let foreign = try await flow.client.request(
                .put, "/v1/biometrics/registrations/\(other.registrationId)/push-token", json: ["platform": "apns", "token": String(repeating: "ab", count: 32)],
                headers: phone.authorization)
            #expect(foreign.status == .unauthorized && foreign.errorCode == "invalid_device_credential")
            // A new credential replaces the old one.
            let renewed = try await flow.client.request(.post, "/v1/biometrics/registrations/\(phone.registrationId)/device-credential", token: account.token)
            #expect(renewed.status == .created && renewed.headers[.cacheControl] == "no-store")
            let fresh = TestPhone(device: phone.device, registrationId: phone.registrationId, credential: try #require(renewed.value("deviceCredential")))
            #expect(try await flow.client.request(.get, "/v1/sign-in-requests/pending", headers: phone.authorization).errorCode == "invalid_device_credential")
            #expect(try await flow.pendingRequests(fresh).isEmpty)
            // Another account's session cannot make one; revoking the registration kills it.
            let stranger = try await flow.signUp()
            let notMine = try await flow.client.request(.post, "/v1/biometrics/registrations/\(phone.registrationId)/device-credential", token: stranger.token)
            #expect(notMine.status == .notFound && notMine.errorCode == "registration_not_found")
            let revoked = try await flow.client.request(.delete, "/v1/biometrics/registrations/\(phone.registrationId)", token: account.token)
            #expect(revoked.status == .noContent)
            let dead = try await flow.client.request(.get, "/v1/sign-in-requests/pending", headers: fresh.authorization)
            #expect(dead.status == .unauthorized && dead.errorCode == "invalid_device_credential")
            let again = try await flow.client.request(.post, "/v1/biometrics/registrations/\(phone.registrationId)/device-credential", token: account.token)
            #expect(again.status == .unauthorized && again.errorCode == "registration_revoked")
        }
    }

    @Test func aRevokedRegistrationCannotApproveNorAnotherAccountsPhone() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let stranger = try await flow.enrollPhone(try await flow.signUp().token)
            let created = try await flow.requestSignIn(["email": account.email])
            let requestId = try #require(created.value("requestId"))
            let number = try #require(created.any(["number"]) as? Int)
            let listed = try await flow.pendingRequests(phone)
            let payload = try Flow.payload(try #require(listed.first))
            let foreign = try await flow.approve(requestId, stranger, payload: payload, choice: number)
            #expect(foreign.status == .forbidden && foreign.errorCode == "registration_not_allowed")
            _ = try await flow.client.request(.delete, "/v1/biometrics/registrations/\(phone.registrationId)", token: account.token)
            let revoked = try await flow.approve(requestId, phone, payload: payload, choice: number)
            #expect(revoked.status == .unauthorized && revoked.errorCode == "registration_revoked")
            let unknown = try await flow.client.request(
                .post, "/v1/sign-in-requests/\(requestId)/approve", json: ["registrationId": "nope", "choice": number, "signature": "AAAA"])
            #expect(unknown.status == .notFound && unknown.errorCode == "registration_not_found")
        }
    }

    @Test(arguments: [
        ("/v1/sign-in-requests", #"{"email": "not an address"}"#),
        ("/v1/sign-in-requests", #"{"clientId": "unknown"}"#),
        ("/v1/sign-in-requests", #"{"email": 5}"#),
        ("/v1/sign-in-requests/x/approve", #"{"registrationId": "r", "choice": 9, "signature": "AAAA"}"#),
        ("/v1/sign-in-requests/x/approve", #"{"registrationId": "r", "choice": 1.5, "signature": "AAAA"}"#),
        ("/v1/sign-in-requests/x/approve", #"{"registrationId": "r", "choice": 12, "signature": "!!"}"#),
        ("/v1/sign-in-requests/x/decline", #"{"registrationId": "r", "reason": "bored", "signature": "AAAA"}"#),
        ("/v1/sign-in-requests/x/decline", #"{"registrationId": "r", "signature": "AAAA"}"#),
    ])
    func malformedInputIsA400(path: String, body: String) async throws {
        try await Self.run { flow, _ in
            let response = try await flow.client.request(.post, path, raw: body)
            #expect(response.status == .badRequest && response.errorCode == "invalid_request", "\(path) \(body)")
        }
    }

    @Test func thePollChecksItsTokenAndWait() async throws {
        try await Self.run { flow, _ in
            let created = try await flow.requestSignIn()
            let requestId = try #require(created.value("requestId"))
            let pollToken = try #require(created.value("pollToken"))
            for wait in ["31", "-1", "abc", "1.5", ""] {
                let response = try await flow.client.request(.get, "/v1/sign-in-requests/\(requestId)?wait=\(wait)", token: pollToken)
                #expect(response.status == .badRequest && response.errorCode == "invalid_request", "wait=\(wait)")
            }
            let noToken = try await flow.client.request(.get, "/v1/sign-in-requests/\(requestId)")
            #expect(noToken.status == .unauthorized && noToken.errorCode == "unauthenticated")
            let wrong = try await flow.pollSignIn(requestId, (pollToken.first == "x" ? "y" : "x") + pollToken.dropFirst())
            #expect(wrong.status == .notFound && wrong.errorCode == "sign_in_request_not_found")
            let unknown = try await flow.pollSignIn("nope", pollToken)
            #expect(unknown.status == .notFound && unknown.errorCode == "sign_in_request_not_found")
            let approveUnknown = try await flow.client.request(
                .post, "/v1/sign-in-requests/nope/approve", json: ["registrationId": "r", "choice": 12, "signature": "AAAA"])
            #expect(approveUnknown.status == .notFound && approveUnknown.errorCode == "sign_in_request_not_found")
            let zero = try await flow.pollSignIn(requestId, pollToken, wait: 0)
            #expect(zero.value("status") == "pending")
        }
    }

    @Test func aLongPollAnswersAsSoonAsThePhoneDecidesAndConcurrentPollsMakeOneSession() async throws {
        try await Self.run { flow, _ in
            let account = try await flow.signUp()
            let phone = try await flow.enrollPhone(account.token)
            let created = try await flow.requestSignIn(["email": account.email])
            let requestId = try #require(created.value("requestId"))
            let pollToken = try #require(created.value("pollToken"))
            let listed = try await flow.pendingRequests(phone)
            let payload = try Flow.payload(try #require(listed.first))
            async let first = flow.pollSignIn(requestId, pollToken, wait: 30)
            async let second = flow.pollSignIn(requestId, pollToken, wait: 30)
            // The polls are waiting (a zero-wait poll answers pending meanwhile); the approval wakes them.
            try await Task.sleep(for: .milliseconds(100))
            let approved = try await flow.approve(requestId, phone, payload: payload, choice: try #require(created.any(["number"]) as? Int))
            #expect(approved.status == .ok)
            let answers = try await [first, second]
            #expect(answers.allSatisfy { $0.value("status") == "approved" })
            #expect(answers.filter { $0.any(["session"]) != nil }.count == 1)
        }
    }
}
