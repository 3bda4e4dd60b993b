import Foundation
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// The SDK's app PIN: set after a password sign-in, used directly or as `login`'s fallback when the user picks the
/// fallback button or the OS has locked biometrics out.
struct PinFallbackTests {
    typealias Phone = BiometricLoginTests.Phone

    /// A PIN closure that answers from a list and records what it was asked.
    final class PinPad: Sendable {
        private let state: NIOLockedValueBox<(answers: [String?], requests: [BiometricLogin.PinRequest])>

        init(_ answers: [String?]) { self.state = NIOLockedValueBox((answers, [])) }

        var requests: [BiometricLogin.PinRequest] { self.state.withLockedValue { $0.requests } }

        var provider: BiometricLogin.PinProvider {
            { request in
                self.state.withLockedValue { state in
                    state.requests.append(request)
                    return state.answers.isEmpty ? nil : state.answers.removeFirst()
                }
            }
        }
    }

    @Test(arguments: [BiometricLoginError.Code.userFallback, .lockedOut])
    func loginFallsBackToThePin(trigger: BiometricLoginError.Code) async throws {
        try await TestServer.run { client in
            let verifier = ScriptedVerifier()
            let phone = Phone(client: client, verifier: verifier)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            let registration = try await phone.login.setPin("4826", session: session)
            #expect(registration.pin == "set")
            #expect(try await phone.enrollment()?.pinSet == true)

            // A wrong PIN first: the closure is asked again and told why.
            await verifier.enqueue(.fail(trigger))
            let pad = PinPad(["1111", "4826"])
            let signedIn = try await phone.login.login(reason: "Sign in", pinFallback: pad.provider)
            #expect(signedIn.session.methods == ["pin"])
            #expect(pad.requests.map(\.attempt) == [1, 2])
            #expect(pad.requests.allSatisfy { $0.trigger == trigger })
            #expect(pad.requests.last?.previousError?.code == .pinIncorrect)
        }
    }

    @Test func cancellingThePinReportsTheOriginalOutcome() async throws {
        try await TestServer.run { client in
            let verifier = ScriptedVerifier(outcomes: [.approve, .fail(.userFallback)])
            let phone = Phone(client: client, verifier: verifier)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            try await phone.login.setPin("4826", session: session)
            let pad = PinPad([])
            await #expect(throws: BiometricLoginError(.userFallback, "")) {
                try await phone.login.login(reason: "Sign in", pinFallback: pad.provider)
            }
            #expect(pad.requests.count == 1)
        }
    }

    @Test func withoutAPinTheClosureIsNeverAsked() async throws {
        try await TestServer.run { client in
            let verifier = ScriptedVerifier(outcomes: [.approve, .fail(.lockedOut)])
            let phone = Phone(client: client, verifier: verifier)
            try await phone.login.enable(session: try await phone.signUp())
            let pad = PinPad(["4826"])
            await #expect(throws: BiometricLoginError(.lockedOut, "")) {
                try await phone.login.login(reason: "Sign in", pinFallback: pad.provider)
            }
            #expect(pad.requests.isEmpty)
        }
    }

    @Test func threeWrongPinsDisableItUntilThePasswordIsUsed() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            try await phone.login.setPin("4826", session: session)
            for _ in 0..<3 {
                await #expect(throws: BiometricLoginError(.pinIncorrect, "", serverCode: "invalid_pin")) {
                    try await phone.login.loginWithPin("0000")
                }
            }
            await #expect(throws: BiometricLoginError(.pinDisabled, "", serverCode: "pin_disabled")) {
                try await phone.login.loginWithPin("4826")
            }
            // In the fallback loop too, a disabled PIN ends the loop (same device state, a new prompt script).
            let verifier = ScriptedVerifier(outcomes: [.fail(.userFallback)])
            let other = Phone(client: client, verifier: verifier, state: phone.state, keyStore: phone.keyStore)
            let pad = PinPad(["4826", "4826"])
            await #expect(throws: BiometricLoginError(.pinDisabled, "", serverCode: "pin_disabled")) {
                try await other.login.login(reason: "Sign in", pinFallback: pad.provider)
            }
            #expect(pad.requests.count == 1)

            _ = try await phone.login.client.signIn(email: session.user.email, password: BiometricLoginTests.password)
            #expect(try await phone.login.loginWithPin("4826").session.methods == ["pin"])
        }
    }

    @Test func removingThePinAndServerSideRemovalAreReflectedLocally() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            try await phone.login.setPin("4826", session: session)
            try await phone.login.removePin(session: session)
            #expect(try await phone.enrollment()?.pinSet == false)
            try await phone.login.removePin(session: session)  // idempotent

            try await phone.login.setPin("4826", session: session)
            let registrationId = try #require(try await phone.enrollment()?.registrationId)
            try await phone.login.client.removePin(token: session.session.token, registrationId: registrationId)
            await #expect(throws: BiometricLoginError(.pinNotSet, "", serverCode: "pin_not_set")) {
                try await phone.login.loginWithPin("4826")
            }
            #expect(try await phone.enrollment()?.pinSet == false)
        }
    }

    @Test func aPinNeedsAnEnrolmentOfTheSameAccount() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await phone.login.setPin("4826", session: session) }
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await phone.login.loginWithPin("4826") }
            try await phone.login.enable(session: session)
            let other = try await phone.signUp()
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await phone.login.setPin("4826", session: other) }
        }
    }

    @Test func aServerLockIsItsOwnCode() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.lockoutThreshold = 1 }) { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            let registrationId = try #require(try await phone.enrollment()?.registrationId)
            let grant = try await phone.login.client.startAuthentication(registrationId: registrationId)
            _ = try? await phone.login.client.finishAuthentication(
                registrationId: registrationId,
                challenge: grant.challenge,
                signature: [UInt8](repeating: 1, count: 64),
                sessionDurationMinutes: nil
            )
            await #expect(throws: BiometricLoginError(.registrationLocked, "", serverCode: "registration_locked")) {
                try await phone.login.login(reason: "Sign in")
            }
            // Local state is kept: unlocking on the server makes the device usable again.
            #expect(try await phone.enrollment() != nil)
        }
    }
}
