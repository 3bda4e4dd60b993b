import Foundation
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// Sign-ups without a password through the SDK (issue #42), against the real server in process.
struct SignUpClientTests {
    @Test func aDeviceKeySignUpSignsInAndApprovesASignInRequest() async throws {
        try await TestServer.run { client in
            let phone = SignInApprovalTests.phone(client)
            let browser = TouchstoneClient(transport: TestClientTransport(client))
            let email = "sdk-signup-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let session = try await phone.signUp(email: email, displayName: "Lee", deviceName: "Lee's phone")
            #expect(session.user.email == email && session.user.hasPassword == false)
            #expect(session.session.methods == ["biometric"])
            guard case .enabled(let enrollment) = try await phone.status() else { Issue.record("not enabled after sign-up"); return }
            #expect(enrollment.userId == session.user.id)
            #expect(try await phone.login(reason: "Sign in").user.id == session.user.id)
            // The device credential was kept: the phone reads and approves a computer's sign-in request.
            let started = try await browser.startSignInRequest(email: email)
            let request = try #require(try await phone.pendingSignInRequests().first)
            try await phone.approveSignIn(request, choice: started.number)
            let approved = try await browser.signInRequestStatus(id: started.requestId, pollToken: started.pollToken, wait: 5)
            #expect(approved.status == "approved" && approved.session?.user.email == email)
            // This device is taken now; the address too.
            await #expect(throws: BiometricLoginError(.enabledForAnotherAccount, "")) { _ = try await phone.signUp(email: "again@example.com") }
            let other = SignInApprovalTests.phone(client)
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "email_taken")) { _ = try await other.signUp(email: email) }
            #expect(try await other.status() == .notEnabled)
        }
    }

    @Test func aPasskeySignUpCreatesAnAccountWithoutAPassword() async throws {
        try await TestServer.run(configuration: PasskeyLoginTests.configuration) { client in
            let (passkeys, _) = PasskeyLoginTests.phone(client)
            let session = try await passkeys.signUp(email: "passkey-sdk@example.com", displayName: "Kim", name: "iPhone")
            #expect(session.user.hasPassword == false && session.session.methods == ["passkey"])
            #expect(try await passkeys.signIn().user.id == session.user.id)
            await #expect(throws: PasskeyError(.server, "", serverCode: "email_taken")) {
                _ = try await passkeys.signUp(email: "passkey-sdk@example.com")
            }
        }
    }
}
