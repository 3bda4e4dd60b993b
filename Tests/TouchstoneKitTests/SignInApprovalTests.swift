import Foundation
import HummingbirdTesting
import Testing
import TouchstoneConfirmation
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// Sign-in approved on the phone (issue #34) through the SDK, against the real server in process: the browser's calls
/// and the phone's, with the software key store.
struct SignInApprovalTests {
    /// The issuer of ``TestServer``'s configuration (port 0): what its QR codes name.
    static let issuer = URL(string: "http://localhost:0")!

    /// A phone whose transport knows the server's URL (as a real one does), so it can check scanned codes.
    static func phone(_ client: any TestClientProtocol, state: InMemoryStateStore = InMemoryStateStore()) -> BiometricLogin {
        BiometricLogin(
            client: TouchstoneClient(transport: TestClientTransport(client, serverURL: Self.issuer)),
            keyStore: SoftwareKeyStore(),
            verifier: ScriptedVerifier.alwaysApprove(),
            stateStore: state
        )
    }

    @Test func approveDeclineAndWrongNumberEndToEnd() async throws {
        try await TestServer.run { client in
            let phone = Self.phone(client)
            let browser = TouchstoneClient(transport: TestClientTransport(client))
            let email = "sdk-phone-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let session = try await phone.client.createUser(email: email, password: "correct horse battery")
            try await phone.enable(session: session, deviceName: "Test phone")

            // Approve: the number the browser shows, among the three the phone offers.
            let started = try await browser.startSignInRequest(email: email)
            #expect((10...99).contains(started.number) && started.qr.hasPrefix("touchstone://sign-in?"))
            let waiting = try await browser.signInRequestStatus(id: started.requestId, pollToken: started.pollToken)
            #expect(waiting.status == "pending" && waiting.session == nil)
            let pending = try await phone.pendingSignInRequests()
            let request = try #require(pending.first)
            #expect(pending.count == 1 && request.needsNumber && request.numbers.contains(started.number) && request.client == "Touchstone")
            // A number the phone did not offer is refused before anything is signed.
            let notOffered = (10...99).first { !request.numbers.contains($0) }!
            await #expect(throws: BiometricLoginError(.signInRequestMismatch, "")) { try await phone.approveSignIn(request, choice: notOffered) }
            try await phone.approveSignIn(request, choice: started.number)
            let approved = try await browser.signInRequestStatus(id: started.requestId, pollToken: started.pollToken, wait: 5)
            #expect(approved.status == "approved" && approved.session?.session.methods == ["phone_approval"])
            #expect(approved.session?.user.email == email)

            // A wrong number (offered, but not the computer's): declined by the server.
            let second = try await browser.startSignInRequest(email: email)
            let secondRequest = try #require(try await phone.pendingSignInRequests().first)
            let wrong = secondRequest.numbers.first { $0 != second.number }!
            let wrongError = await #expect(throws: BiometricLoginError.self) { try await phone.approveSignIn(secondRequest, choice: wrong) }
            #expect(wrongError?.code == .wrongNumber)
            #expect(try await browser.signInRequestStatus(id: second.requestId, pollToken: second.pollToken).status == "declined")
            let late = await #expect(throws: BiometricLoginError.self) { try await phone.approveSignIn(secondRequest, choice: second.number) }
            #expect(late?.code == .signInRequestNotPending)

            // "It wasn't me".
            let third = try await browser.startSignInRequest(email: email)
            try await phone.declineSignIn(try #require(try await phone.pendingSignInRequests().first), reason: .notMe)
            #expect(try await browser.signInRequestStatus(id: third.requestId, pollToken: third.pollToken).status == "declined")

            // Push token, and a renewed credential.
            try await phone.registerPushToken(Data(repeating: 0xab, count: 32))
            try await phone.renewDeviceCredential(session: session)
            #expect(try await phone.pendingSignInRequests().isEmpty)
        }
    }

    @Test func aScannedCodeBindsTheRequestAndCodesForAnotherServerAreRefused() async throws {
        try await TestServer.run { client in
            let phone = Self.phone(client)
            let browser = TouchstoneClient(transport: TestClientTransport(client))
            let session = try await phone.client.createUser(email: "sdk-scan-\(UUID().uuidString.prefix(6))@example.com", password: "correct horse battery")
            try await phone.enable(session: session)
            let started = try await browser.startSignInRequest()
            let url = try #require(URL(string: started.qr))
            try await phone.approveSignIn(scannedURL: url) { numbers in
                numbers.contains(started.number) ? started.number : nil
            }
            let status = try await browser.signInRequestStatus(id: started.requestId, pollToken: started.pollToken)
            #expect(status.status == "approved" && status.session?.user.id == session.user.id)

            let elsewhere = try #require(URL(string: started.qr.replacingOccurrences(of: "localhost%3A0", with: "evil.example")))
            await #expect(throws: BiometricLoginError(.signInRequestMismatch, "")) { try await phone.signInRequest(scannedURL: elsewhere) }
            await #expect(throws: BiometricLoginError(.signInRequestMismatch, "")) {
                try await phone.signInRequest(scannedURL: URL(string: "https://example.com/?request=x")!)
            }
        }
    }

    @Test func withoutACredentialThePhoneSaysSo() async throws {
        try await TestServer.run { client in
            let state = InMemoryStateStore()
            let phone = Self.phone(client, state: state)
            let session = try await phone.client.createUser(email: "sdk-nocred-\(UUID().uuidString.prefix(6))@example.com", password: "correct horse battery")
            try await phone.enable(session: session)
            try await state.clearDeviceCredential()
            await #expect(throws: BiometricLoginError(.deviceCredentialInvalid, "")) { try await phone.pendingSignInRequests() }
            try await phone.renewDeviceCredential(session: session)
            #expect(try await phone.pendingSignInRequests().isEmpty)
        }
    }

    /// The SDK's canonical JSON is the server's (RFC 8785), for payloads with text that needs escaping.
    @Test(arguments: ["Firefox \"Nightly\"\\", "tab\tnew\nline\u{1}\u{1f}", "Ünïcödé 🔐 \u{2028}", ""])
    func theSDKSignsTheBytesTheServerChecks(userAgent: String) throws {
        let server = SignInApproval.Payload(
            requestId: "r1", kind: .signIn, rpId: "example.com", userId: "u1", client: "Bank \"Web\"", expiresAt: "2026-11-26T10:00:00.000Z",
            browser: .init(address: "192.0.2.1", userAgent: userAgent))
        let data = try JSONEncoder().encode(server)
        let sdk = try JSONDecoder().decode(SignInRequestPayload.self, from: data)
        for (ours, theirs) in [
            (SignInDecision.approve(choice: 42), SignInApproval.Decision.approve(choice: 42)),
            (.decline(.notMe), .decline(.notMe)), (.decline(.cancel), .decline(.cancel)),
        ] {
            #expect(sdk.signedBytes(ours) == server.signedBytes(theirs))
        }
        let backchannel = SignInApproval.Payload(
            requestId: "r2", kind: .backchannel, rpId: "example.com", userId: "u1", client: "Call centre", expiresAt: "x", bindingMessage: nil)
        let decoded = try JSONDecoder().decode(SignInRequestPayload.self, from: try JSONEncoder().encode(backchannel))
        #expect(decoded.signedBytes(.approve(choice: nil)) == backchannel.signedBytes(.approve(choice: nil)))
    }
}
