import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// `BiometricLogin.confirm`: the SDK reads the payload, shows its summary, signs it, and maps the outcomes.
struct ConfirmTests {
    typealias Phone = BiometricLoginTests.Phone

    static var configuration: TouchstoneConfiguration { TestServer.configuration { $0.passkeys.rpId = "app.example" } }

    /// A confirmation made with the user's session; returns what the app would pass to `confirm`.
    static func make(_ client: any TestClientProtocol, _ session: TouchstoneSession, summary: String = "Pay €120.00 to ACME Ltd", ttl: Int = 300)
        async throws -> ConfirmationRequest
    {
        let response = try await client.request(
            .post,
            "/v1/confirmations",
            token: session.session.token,
            json: ["summary": summary, "details": ["amount": "120.00"], "ttlSeconds": ttl]
        )
        try #require(response.status == .created, "\(String(decoding: response.body, as: UTF8.self))")
        return ConfirmationRequest(
            id: try #require(response.value("confirmation", "id")),
            summary: try #require(response.value("confirmation", "summary")),
            payload: try #require(response.value("payload"))
        )
    }

    @Test func theSummaryIsPromptedThePayloadSignedAndAReceiptReturned() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            let request = try await Self.make(client, session)
            let approved = try await phone.login.confirm(request, promptPrefix: "Approve: ")
            #expect(approved.confirmation.status == "approved")
            #expect(approved.confirmation.method == "biometric")
            #expect(approved.receipt.split(separator: ".").count == 3)
            #expect(await phone.verifier.reasons.last == "Approve: Pay €120.00 to ACME Ltd")
            // Twice: the server says it is decided.
            await #expect(throws: BiometricLoginError(.confirmationNotPending, "", serverCode: "confirmation_not_pending")) {
                try await phone.login.confirm(request)
            }
        }
    }

    @Test func aPayloadThatDoesNotMatchIsNeverSigned() async throws {
        try await TestServer.run(configuration: Self.configuration) { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            let request = try await Self.make(client, session)
            let other = try await Self.make(client, session, summary: "Pay €9,999.00 to Mallory")
            let prompts = await phone.verifier.promptCount
            let mismatches = [
                ConfirmationRequest(id: request.id, summary: "Pay €12.00 to ACME Ltd", payload: request.payload),
                ConfirmationRequest(id: request.id, summary: request.summary, payload: other.payload),
                ConfirmationRequest(id: other.id, summary: request.summary, payload: other.payload),
                ConfirmationRequest(id: request.id, summary: request.summary, payload: "not json"),
            ]
            for mismatch in mismatches {
                await #expect(throws: BiometricLoginError(.confirmationMismatch, "")) { try await phone.login.confirm(mismatch) }
            }
            // Canonically equivalent is not the same text: "é" shown, "e\u{301}" signed (or the reverse).
            let cafe = try await Self.make(client, session, summary: "Pay €5.00 to Caf\u{E9} Ltd")
            let decomposed = ConfirmationRequest(id: cafe.id, summary: "Pay €5.00 to Cafe\u{301} Ltd", payload: cafe.payload)
            #expect(decomposed.summary == cafe.summary)  // Swift's String equality would let it through
            await #expect(throws: BiometricLoginError(.confirmationMismatch, "")) { try await phone.login.confirm(decomposed) }
            // Another user's confirmation, even when the app passes it faithfully.
            let stranger = try await Phone(client: client).signUp()
            let theirs = try await Self.make(client, stranger)
            await #expect(throws: BiometricLoginError(.confirmationMismatch, "")) { try await phone.login.confirm(theirs) }
            #expect(await phone.verifier.promptCount == prompts)
            // The real one still works.
            #expect(try await phone.login.confirm(request).confirmation.status == "approved")
        }
    }

    @Test func outcomesMapToCodes() async throws {
        let clock = ManualClock()
        try await TestServer.run(configuration: Self.configuration, clock: clock) { client in
            let verifier = ScriptedVerifier()
            let phone = Phone(client: client, verifier: verifier)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            // The user cancels: nothing is sent, the confirmation stays pending.
            let request = try await Self.make(client, session)
            await verifier.enqueue(.fail(.userCancelled))
            await #expect(throws: BiometricLoginError(.userCancelled, "")) { try await phone.login.confirm(request) }
            #expect(try await phone.login.client.confirmation(id: request.id, token: session.session.token).status == "pending")
            // Expired.
            clock.advance(by: 301)
            await #expect(throws: BiometricLoginError(.confirmationExpired, "", serverCode: "confirmation_expired")) {
                try await phone.login.confirm(request)
            }
            // The key vanished from the device: reported and forgotten, nothing signed.
            let keyless = Phone(client: client)
            let keylessSession = try await keyless.signUp()
            try await keyless.login.enable(session: keylessSession)
            let keylessRequest = try await Self.make(client, keylessSession)
            let tag = try #require(try await keyless.enrollment()).keyTag
            try await keyless.keyStore.deleteKey(tag: tag)
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await keyless.login.confirm(keylessRequest) }
            #expect(try await keyless.enrollment() == nil)
            // Not enabled on this device.
            let fresh = Phone(client: client)
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await fresh.login.confirm(request) }
        }
    }
}
