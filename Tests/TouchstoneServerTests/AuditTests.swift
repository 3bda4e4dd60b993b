import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// The audit trail: what is recorded, how a user reads theirs, and that no secret ever reaches it or the logs.
struct AuditTests {
    @Test func aUserReadsTheirOwnTrailNewestFirstAPageAtATime() async throws {
        try await TestServer.run { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(account.token, device)
            #expect(try await flow.login(id, device).status == .ok)
            let challenge = try await flow.challenge(id)
            _ = try await flow.finishLogin(id, challenge: challenge, signature: TestDeviceKey(.es256).signed(challenge))
            _ = try await flow.setPin(account.token, id, "2468")
            _ = try await flow.pinLogin(id, "0000")
            _ = try await flow.pinLogin(id, "2468")
            _ = try await client.request(.post, "/v1/sessions", json: ["email": account.email, "password": "wrong password"])
            let other = try await flow.signUp()

            let events = try await flow.events(account.token, query: "?limit=100")
            let types = events.map { "\($0["type"] as? String ?? "?")/\($0["outcome"] as? String ?? "?")" }
            #expect(
                types == [
                    "password_login/failure", "pin_login/success", "pin_login/failure", "pin.set/success",
                    "biometric_login/failure", "biometric_login/success", "registration.finished/success",
                    "registration.started/info", "user.created/success",
                ]
            )
            #expect(events.allSatisfy { $0["userId"] as? String == account.userId })
            #expect(events[0]["reason"] as? String == "invalid_credentials")
            #expect(events[4]["reason"] as? String == "invalid_signature")
            #expect(events[4]["registrationId"] as? String == id)
            // Another user sees only theirs.
            #expect(try await flow.events(other.token).map { $0["type"] as? String } == ["user.created"])

            // Pages of 4 join up to the whole trail.
            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = "?limit=4" + (cursor.map { "&cursor=\($0)" } ?? "")
                let response = try await client.request(.get, "/v1/session/events\(query)", token: account.token)
                let page = try #require(response.json["events"] as? [[String: Any]])
                #expect(page.count <= 4)
                seen += page.compactMap { $0["id"] as? String }
                cursor = response.json["nextCursor"] as? String
            } while cursor != nil
            #expect(seen == events.compactMap { $0["id"] as? String })

            let bad = try await client.request(.get, "/v1/session/events?limit=0", token: account.token)
            #expect(bad.errorCode == "invalid_request")
            let badCursor = try await client.request(.get, "/v1/session/events?cursor=zzz", token: account.token)
            #expect(badCursor.errorCode == "invalid_request")
            #expect(try await client.request(.get, "/v1/session/events").status == .unauthorized)
        }
    }

    @Test func eventsRecordTheClientAddressAndUserAgent() async throws {
        try await TestServer.run(.live) { client in
            let response = try await client.request(
                .post,
                "/v1/users",
                json: ["email": "agent@example.com", "password": Flow.password],
                headers: [.userAgent: "TouchstoneTests/1.0"]
            )
            let token = try #require(response.value("session", "token"))
            let events = try await Flow(client: client).events(token)
            #expect(events.first?["clientAddress"] as? String == "127.0.0.1")
            #expect(events.first?["userAgent"] as? String == "TouchstoneTests/1.0")
        }
    }

    /// Runs every flow that handles a secret with trace logging, then looks for each secret in the captured log and in
    /// the stored events.
    @Test func secretsNeverReachTheLogsOrTheTrail() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "touchstone-test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let clock = ManualClock()
        var dependencies = TestServer.dependencies(clock: clock)
        dependencies.logger = logger
        let configuration = TestServer.configuration { $0.logLevel = .trace }
        defer { TestServer.removeDatabase(of: configuration) }
        let password = "Pa55word-\(UUID().uuidString)"
        let pin = "73519"
        let app = try await buildApplication(configuration: configuration, dependencies: dependencies)
        let secrets: [String] = try await app.test(.router) { client in
            let flow = Flow(client: client)
            let signUp = try await client.request(.post, "/v1/users", json: ["email": "secret@example.com", "password": password])
            let token = try #require(signUp.value("session", "token"))
            let signIn = try await client.request(.post, "/v1/sessions", json: ["email": "secret@example.com", "password": password])
            let token2 = try #require(signIn.value("session", "token"))
            _ = try await client.request(.post, "/v1/sessions", json: ["email": "secret@example.com", "password": password + "x"])
            let device = TestDeviceKey(.es256)
            let id = try await flow.enroll(token2, device)
            _ = try await flow.setPin(token2, id, pin)
            let pinLogin = try await flow.pinLogin(id, pin)
            let token3 = try #require(pinLogin.value("session", "token"))
            _ = try await flow.pinLogin(id, "00000")
            let login = try await flow.login(id, device)
            let token4 = try #require(login.value("session", "token"))
            _ = try await client.request(.get, "/v1/session", token: token4)
            let accessToken = try #require(try await client.request(.post, "/v1/session/token", token: token4).value("accessToken"))
            _ = try await client.request(.delete, "/v1/session", token: token3)
            // Sign-in approved on the phone: the device credential, a push token, the poll token and the QR secret
            // (sent in a query string), and the session the poll answers.
            let phone = try await flow.enrollPhone(token2)
            let pushToken = String(repeating: "5e", count: 32)
            _ = try await client.request(.put, "/v1/biometrics/registrations/\(phone.registrationId)/push-token",
                json: ["platform": "apns", "token": pushToken], headers: phone.authorization)
            let created = try await flow.requestSignIn()
            let requestId = try #require(created.value("requestId"))
            let pollToken = try #require(created.value("pollToken"))
            let qr = try #require(created.value("qr"))
            let qrSecret = try #require(URLComponents(string: qr)?.queryItems?.first { $0.name == "secret" }?.value)
            let scanned = try await client.request(.get, "/v1/sign-in-requests/\(requestId)?secret=\(qrSecret)", headers: phone.authorization)
            let payload = try Flow.payload(scanned.json)
            _ = try await flow.approve(requestId, phone, payload: payload, choice: try #require(created.any(["number"]) as? Int))
            let phoneSession = try #require(try await flow.pollSignIn(requestId, pollToken, wait: 1).value("session", "token"))
            let events = try await client.request(.get, "/v1/session/events?limit=100", token: token)
            return [password, pin, token, token2, token3, token4, accessToken, phone.credential, pushToken, pollToken, qrSecret, phoneSession,
                String(decoding: events.body, as: UTF8.self)]
        }
        let trail = try #require(secrets.last)
        let log = lines.withLockedValue { $0.joined(separator: "\n") }
        #expect(!log.isEmpty)
        for secret in secrets.dropLast() {
            #expect(!log.contains(secret), "a secret is in the log")
            #expect(!trail.contains(secret), "a secret is in the audit trail")
        }
    }
}

/// Collects every log line (message and metadata).
struct CapturingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = self.metadata.merging(event.metadata ?? [:]) { $1 }
        self.lines.withLockedValue { $0.append("\(event.level) \(event.message) \(all)") }
    }
}
