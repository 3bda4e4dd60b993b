import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// docs/security.md, "Fresh strong authentication" (issue #42), row by row, on SQLite and PostgreSQL: each privileged
/// act against a session of each kind. A strong proof (password, passkey with user verification, device key) counts
/// for the re-authentication window; a PIN, a passkey without user verification, a mailed code and a recovery code
/// never do (the code sessions may enrol one device key or passkey); a stale session counts again after
/// `POST /v1/session/reauthenticate`.
struct FreshAuthenticationTests {
    /// A privileged act: its request (made harmless where the answer after the check is an error: a wrong address, a
    /// registration that is not locked) and whether it is an enrolment, which code sessions may make once.
    struct Act: Sendable, CustomTestStringConvertible {
        var name: String
        var isEnrolment = false
        var request: @Sendable (Setup, String) async throws -> JSONTestResponse
        var testDescription: String { self.name }
    }

    /// What a row needs: the client, the account, its device key and its passkey.
    struct Setup: Sendable {
        var client: any TestClientProtocol
        var account: Flow.Account
        var registrationId: String
        var passkeyId: String
    }

    static let acts: [Act] = [
        Act(name: "enrol a device key", isEnrolment: true) { setup, token in
            try await Flow(client: setup.client).startRegistration(token, TestDeviceKey(.es256))
        },
        Act(name: "register a passkey", isEnrolment: true) { setup, token in
            try await setup.client.request(.post, "/v1/passkeys/registrations/options", token: token, json: [:])
        },
        Act(name: "set a PIN") { setup, token in
            try await setup.client.request(.put, "/v1/biometrics/registrations/\(setup.registrationId)/pin", token: token, json: ["pin": "2468"])
        },
        Act(name: "unlock a device key") { setup, token in
            try await setup.client.request(.post, "/v1/biometrics/registrations/\(setup.registrationId)/unlock", token: token)
        },
        Act(name: "unlock a passkey") { setup, token in
            try await setup.client.request(.post, "/v1/passkeys/\(setup.passkeyId)/unlock", token: token)
        },
        Act(name: "change the address") { setup, token in
            try await setup.client.request(.put, "/v1/session/email", token: token, json: ["email": setup.account.email])
        },
        Act(name: "change the password") { setup, token in
            try await setup.client.request(.put, "/v1/session/password", token: token, json: ["newPassword": "short"])
        },
        Act(name: "make recovery codes") { setup, token in
            try await setup.client.request(.post, "/v1/recovery-codes", token: token)
        },
        Act(name: "export the account") { setup, token in
            try await setup.client.request(.get, "/v1/users/me/export", token: token)
        },
        Act(name: "delete the account") { setup, token in
            try await setup.client.request(.delete, "/v1/users/me", token: token, json: ["confirmEmail": "someone-else@example.com"])
        },
    ]

    /// The kinds of session, and whether each is fresh strong authentication.
    enum Kind: String, CaseIterable, Sendable {
        case password, deviceKey, passkey, passkeyWithoutUserVerification, pin, emailCode, recoveryCode, stalePassword

        var isStrong: Bool { [.password, .deviceKey, .passkey].contains(self) }
        var isCode: Bool { self == .emailCode || self == .recoveryCode }
    }

    static func refused(_ response: JSONTestResponse) -> Bool {
        response.status == .forbidden && response.errorCode == "reauthentication_required"
    }

    @Test(arguments: NulInputTests.databases)
    func everyActAgainstEveryKindOfSession(database: NulInputTests.Database) async throws {
        try await Self.withAccount(database) { setup, sessions, _ in
            for act in Self.acts {
                for kind in Kind.allCases {
                    let response = try await act.request(setup, try #require(sessions[kind]))
                    let allowed = kind.isStrong || (kind.isCode && act.isEnrolment)
                    #expect(Self.refused(response) == !allowed, "\(act.name) with a \(kind) session: \(response.status) \(response.errorCode ?? "")")
                }
            }
        }
    }

    /// Removing a credential is open to any session but a code session's.
    @Test(arguments: NulInputTests.databases)
    func codeSessionsRemoveNoCredential(database: NulInputTests.Database) async throws {
        try await Self.withAccount(database) { setup, sessions, _ in
            for kind in Kind.allCases {
                let token = try #require(sessions[kind])
                let passkey = try await setup.client.request(.delete, "/v1/passkeys/no-such-passkey", token: token)
                let device = try await setup.client.request(.delete, "/v1/biometrics/registrations/no-such-registration", token: token)
                #expect(Self.refused(passkey) == kind.isCode, "\(kind): \(passkey.status)")
                #expect(Self.refused(device) == kind.isCode, "\(kind): \(device.status)")
            }
        }
    }

    /// A code session enrols once: the second enrolment needs a strong proof.
    @Test func aCodeSessionEnrolsOneCredential() async throws {
        try await Self.withAccount(.sqlite) { setup, sessions, _ in
            let token = try #require(sessions[.emailCode])
            let flow = Flow(client: setup.client)
            #expect(try await flow.enroll(token, TestDeviceKey(.es256)).isEmpty == false)
            let second = try await flow.startRegistration(token, TestDeviceKey(.es256))
            #expect(Self.refused(second))
            #expect(Self.message(second).contains("one device or passkey"))
        }
    }

    static func message(_ response: JSONTestResponse) -> String {
        ((response.json["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    // MARK: Setting up

    /// A fresh account with a device key and a passkey, and one session of each kind; the stale one is a password
    /// session the clock has moved 11 minutes past (the window is 10), every other opened after that move.
    static func withAccount(
        _ database: NulInputTests.Database,
        _ body: @Sendable (Setup, [Kind: String], ReauthenticationDriver) async throws -> Void
    ) async throws {
        try await NulInputTests.withStore(database) { store in
            let clock = ManualClock()
            let mailbox = TestMailbox()
            let configuration = PasskeyTests.configuration { $0.sessionIdleTimeout = .seconds(3600) }
            try await TestServer.run(configuration: configuration, clock: clock, store: store, mailbox: mailbox) { client in
                let flow = Flow(client: client)
                let account = try await flow.signUp("fresh-\(UUID().uuidString.prefix(8))@example.com")
                let device = TestDeviceKey(.es256)
                let registrationId = try await flow.enroll(account.token, device)
                #expect(try await flow.setPin(account.token, registrationId, "1357").status == .ok)
                var browser = PasskeyTests.Browser(client: client)
                var (credential, registered) = try await browser.register(account.token)
                let passkeyId = try #require(registered.value("passkey", "id"))
                let codes = try #require(
                    try await client.request(.post, "/v1/recovery-codes", token: account.token).any(["codes"]) as? [String])
                let stale = try await flow.signIn(account.email)
                clock.advance(by: 11 * 60)

                var sessions: [Kind: String] = [.stalePassword: stale]
                sessions[.password] = try await flow.signIn(account.email)
                sessions[.deviceKey] = try await flow.login(registrationId, device).value("session", "token")
                sessions[.pin] = try await flow.pinLogin(registrationId, "1357").value("session", "token")
                sessions[.passkey] = try await browser.signIn(&credential).value("session", "token")
                browser.authenticator.flags.remove(.userVerified)
                sessions[.passkeyWithoutUserVerification] = try await browser.signIn(&credential).value("session", "token")
                _ = try await client.request(.post, "/v1/email-codes", json: ["email": account.email])
                let mail = try await mailbox.waitForMail(to: account.email, kind: "sign_in_code")
                sessions[.emailCode] = try await client.request(
                    .post, "/v1/email-codes/verify", json: ["email": account.email, "code": try #require(mail.code)]
                ).value("session", "token")
                sessions[.recoveryCode] = try await client.request(
                    .post, "/v1/recovery-codes/verify", json: ["email": account.email, "code": codes[0]]
                ).value("session", "token")
                #expect(sessions.count == Kind.allCases.count)
                let setup = Setup(client: client, account: account, registrationId: registrationId, passkeyId: passkeyId)
                try await body(setup, sessions, ReauthenticationDriver(client: client, device: device, registrationId: registrationId, clock: clock))
            }
        }
    }
}

/// Drives `POST /v1/session/reauthenticate` for the tests.
struct ReauthenticationDriver: Sendable {
    let client: any TestClientProtocol
    let device: TestDeviceKey
    let registrationId: String
    let clock: ManualClock

    func withPassword(_ token: String, _ password: String = Flow.password) async throws -> JSONTestResponse {
        try await self.client.request(.post, "/v1/session/reauthenticate", token: token, json: ["password": password])
    }

    func deviceKeyChallenge(_ token: String, registrationId: String? = nil) async throws -> JSONTestResponse {
        try await self.client.request(
            .post, "/v1/session/reauthenticate/device-key-challenge", token: token, json: ["registrationId": registrationId ?? self.registrationId])
    }

    func withDeviceKey(_ token: String, challenge: String, key: TestDeviceKey? = nil) async throws -> JSONTestResponse {
        try await self.client.request(
            .post, "/v1/session/reauthenticate", token: token,
            json: ["deviceKey": ["registrationId": self.registrationId, "challenge": challenge, "signature": (key ?? self.device).signed(challenge)]]
        )
    }
}
