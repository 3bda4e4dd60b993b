import Foundation
import Testing
import TouchstoneKit
import TouchstoneTesting

/// `touchstone device sign-in-requests | approve-sign-in | decline-sign-in` against the real binary, with a browser's
/// requests made through the SDK (issue #34).
struct PhoneApprovalCommandTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test func theSimulatedPhoneListsApprovesAndDeclines() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        defer { server.stop() }
        let state = TemporaryFiles.path("phone")
        defer { TemporaryFiles.remove(state) }
        let device = ["--server", server.baseURL.absoluteString, "--state", state]
        let email = "cli-phone@example.com"
        let (enabled, _, enableErrors) = try await ConfirmationCommandTests.run(["device", "enable", "--email", email, "--sign-up"] + device)
        #expect(enabled == 0, "\(enableErrors)")
        let browser = TouchstoneClient(baseURL: server.baseURL)

        // Approve with the number the browser shows.
        let started = try await browser.startSignInRequest(email: email)
        let (listed, listing, listErrors) = try await ConfirmationCommandTests.run(["device", "sign-in-requests"] + device)
        #expect(listed == 0, "\(listErrors)")
        let requests = try #require(try Self.json(listing)["requests"] as? [[String: Any]])
        #expect(requests.count == 1 && requests.first?["requestId"] as? String == started.requestId)
        #expect((requests.first?["numbers"] as? [Int])?.contains(started.number) == true)
        let (approved, approval, approveErrors) = try await ConfirmationCommandTests.run(
            ["device", "approve-sign-in", started.requestId, "--number", "\(started.number)"] + device)
        #expect(approved == 0, "\(approval) \(approveErrors)")
        #expect((try Self.json(approval)["signInRequest"] as? [String: Any])?["status"] as? String == "approved")
        let status = try await browser.signInRequestStatus(id: started.requestId, pollToken: started.pollToken)
        #expect(status.status == "approved" && status.session?.session.methods == ["phone_approval"])

        // A wrong number: exit 1 and the server's code.
        let second = try await browser.startSignInRequest(email: email)
        let wrong = second.number == 99 ? 98 : second.number + 1
        let (refused, refusal, _) = try await ConfirmationCommandTests.run(["device", "approve-sign-in", second.requestId, "--number", "\(wrong)"] + device)
        #expect(refused == 1)
        let code = (try Self.json(refusal)["error"] as? [String: Any])?["code"] as? String
        // The number may not be among those offered (refused before signing) or be an offered decoy (the server's).
        #expect(code == "wrong_number" || code == "signInRequestMismatch", "\(refusal)")

        // "Not me".
        let third = try await browser.startSignInRequest(email: email)
        let (declined, decline, _) = try await ConfirmationCommandTests.run(["device", "decline-sign-in", third.requestId, "--not-me"] + device)
        #expect(declined == 0)
        #expect((try Self.json(decline)["signInRequest"] as? [String: Any])?["reason"] as? String == "not_me")
        #expect(try await browser.signInRequestStatus(id: third.requestId, pollToken: third.pollToken).status == "declined")
        let (missing, absent, _) = try await ConfirmationCommandTests.run(["device", "decline-sign-in", third.requestId] + device)
        #expect(missing == 1 && absent.contains("sign_in_request_not_found"))

        // No poll token, QR secret or device credential reaches the server's log.
        let secret = try #require(URLComponents(string: started.qr)?.queryItems?.first { $0.name == "secret" }?.value)
        let stored = try Self.json(try String(contentsOfFile: state + "/device-credential.json", encoding: .utf8))
        let credential = try #require(stored["credential"] as? String)
        for value in [started.pollToken, second.pollToken, secret, credential] {
            #expect(!server.log.contains(value))
        }
    }
}

extension PhoneApprovalCommandTests {
    /// A long poll does not hold a stopping server for its whole wait: it answers (still pending) and the server exits
    /// within the 15 seconds `stopAndWait` allows, though the poll asked to wait 30.
    @Test func aLongPollEndsWhenTheServerStops() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        let browser = TouchstoneClient(baseURL: server.baseURL)
        let started = try await browser.startSignInRequest()
        async let polled = browser.signInRequestStatus(id: started.requestId, pollToken: started.pollToken, wait: 30)
        try await Task.sleep(for: .milliseconds(500))
        #expect(await server.stopAndWait())
        #expect(try await polled.status == "pending")
    }
}
