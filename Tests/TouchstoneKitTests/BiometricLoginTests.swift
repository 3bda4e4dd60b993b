import Foundation
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// The SDK core against the real server, in process.
struct BiometricLoginTests {
    static let password = "correct horse battery"

    struct Phone {
        var login: BiometricLogin
        var keyStore: SoftwareKeyStore
        var verifier: ScriptedVerifier
        var state: InMemoryStateStore

        init(
            client: any TestClientProtocol,
            algorithm: SignatureAlgorithm = .es256,
            verifier: ScriptedVerifier = .alwaysApprove(),
            state: InMemoryStateStore = InMemoryStateStore(),
            keyStore: SoftwareKeyStore = SoftwareKeyStore(),
            clock: ManualClock = ManualClock()
        ) {
            self.keyStore = keyStore
            self.verifier = verifier
            self.state = state
            self.login = BiometricLogin(
                // The server's clock (TestServer's default ManualClock starts at the same instant): DPoP proofs carry it.
                client: TouchstoneClient(transport: TestClientTransport(client), now: { clock.now }),
                keyStore: keyStore,
                verifier: verifier,
                stateStore: state,
                algorithm: algorithm
            )
        }

        func signUp(_ email: String = "user-\(UUID().uuidString.prefix(8))@example.com") async throws -> TouchstoneSession {
            try await self.login.client.createUser(email: email, password: BiometricLoginTests.password)
        }

        func enrollment() async throws -> LocalEnrollment? { try await self.state.loadEnrollment() }
    }

    @Test(arguments: SignatureAlgorithm.allCases)
    func enableThenLoginGivesABiometricSession(algorithm: SignatureAlgorithm) async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client, algorithm: algorithm)
            let session = try await phone.signUp()
            let registration = try await phone.login.enable(session: session, deviceName: "Pixel")
            #expect(registration.status == "active")
            #expect(registration.algorithm == algorithm.rawValue)
            let enrollment = try #require(try await phone.enrollment())
            #expect(enrollment.userId == session.user.id)
            #expect(enrollment.registrationId == registration.id)
            #expect(await phone.keyStore.keyExists(tag: enrollment.keyTag))

            let signedIn = try await phone.login.login(reason: "Sign in to Example")
            #expect(signedIn.user.id == session.user.id)
            #expect(signedIn.session.methods == ["biometric"])
            #expect(await phone.verifier.reasons == ["Enable biometric sign-in", "Sign in to Example"])
        }
    }

    @Test func statusNeverPrompts() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            #expect(try await phone.login.status() == .notEnabled)
            try await phone.login.enable(session: try await phone.signUp())
            guard case .enabled = try await phone.login.status() else {
                Issue.record("expected enabled")
                return
            }
            #expect(await phone.verifier.promptCount == 1)  // only the enable prompt
        }
    }

    @Test func availabilityCombinesDeviceAndServer() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.algorithms = [.eddsa] }) { client in
            let phone = Phone(client: client, algorithm: .es256)
            let es256 = try await phone.login.availability()
            #expect(es256 == .disabledByServer)
            let eddsa = Phone(client: client, algorithm: .eddsa)
            let available = try await eddsa.login.availability()
            #expect(available == .available(.simulated))
            await eddsa.verifier.setAvailability(.notEnrolled)
            let notEnrolled = try await eddsa.login.availability()
            #expect(notEnrolled == .deviceUnavailable(.notEnrolled))
        }
    }

    @Test func enableRefusesWhenAnotherAccountIsEnabledHere() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            try await phone.login.enable(session: try await phone.signUp())
            await #expect(throws: BiometricLoginError(.enabledForAnotherAccount, "")) {
                try await phone.login.enable(session: try await phone.signUp())
            }
        }
    }

    @Test func serverSideOneAccountPerDeviceMapsToEnabledForAnotherAccount() async throws {
        try await TestServer.run { client in
            // Two app installs sharing one device id (the server's rule, independent of local state).
            let first = Phone(client: client, state: InMemoryStateStore(deviceId: "shared-device"))
            try await first.login.enable(session: try await first.signUp())
            let second = Phone(client: client, state: InMemoryStateStore(deviceId: "shared-device"))
            await #expect(throws: BiometricLoginError(.enabledForAnotherAccount, "", serverCode: "device_enrolled_for_another_user")) {
                try await second.login.enable(session: try await second.signUp())
            }
            #expect(try await second.enrollment() == nil)
        }
    }

    @Test func enablingAgainForTheSameUserReplacesTheOldKey() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            let first = try #require(try await phone.enrollment())
            try await phone.login.enable(session: session)
            let second = try #require(try await phone.enrollment())
            #expect(first.registrationId != second.registrationId)
            #expect(await !phone.keyStore.keyExists(tag: first.keyTag))
            // Both happened at the same instant of the test clock: compare by id, not by list order.
            let registrations = try await phone.login.client.registrations(token: session.session.token)
            let statuses = Dictionary(uniqueKeysWithValues: registrations.map { ($0.id, $0.status) })
            #expect(statuses == [first.registrationId: "replaced", second.registrationId: "active"])
            #expect(try await phone.login.login(reason: "Sign in").user.id == session.user.id)
        }
    }

    @Test func theNewKeyIsDeletedWhenTheServerRefuses() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let keyStore = SoftwareKeyStore()
            let tags = TagRecorder()
            let login = BiometricLogin(
                client: TouchstoneClient(transport: TestClientTransport(client)),
                keyStore: keyStore,
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: InMemoryStateStore(),
                makeKeyTag: { tags.next() }
            )
            let session = try await login.client.createUser(email: "late@example.com", password: Self.password)
            clock.advance(by: 11 * 60)  // the password sign-in is too old now
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "reauthentication_required")) {
                try await login.enable(session: session)
            }
            let tag = try #require(tags.issued.first)
            #expect(await !keyStore.keyExists(tag: tag))
            #expect(try await login.status() == .notEnabled)
        }
    }

    @Test func aCancelledPromptDuringEnableLeavesNothingBehind() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client, verifier: ScriptedVerifier(outcomes: [.fail(.userCancelled)]))
            let session = try await phone.signUp()
            await #expect(throws: BiometricLoginError(.userCancelled, "")) { try await phone.login.enable(session: session) }
            #expect(try await phone.enrollment() == nil)
            // The abandoned registration never became active.
            #expect(try await phone.login.client.registrations(token: session.session.token).isEmpty)
        }
    }

    @Test(arguments: [BiometricLoginError.Code.userCancelled, .userFallback, .lockedOut])
    func promptOutcomesDuringLoginAreReportedAndKeepTheEnrolment(code: BiometricLoginError.Code) async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            try await phone.login.enable(session: try await phone.signUp())
            await phone.verifier.enqueue(.fail(code))
            await #expect(throws: BiometricLoginError(code, "")) { try await phone.login.login(reason: "Sign in") }
            #expect(try await phone.enrollment() != nil)
            _ = try await phone.login.login(reason: "Sign in")  // the next attempt works
        }
    }

    @Test(arguments: [
        (BiometryAvailability.notAvailable, BiometricLoginError.Code.notAvailable), (.notEnrolled, .notEnrolled),
        (.passcodeNotSet, .passcodeNotSet), (.lockedOut, .lockedOut),
    ])
    func enableReportsWhyTheDeviceCannot(availability: BiometryAvailability, code: BiometricLoginError.Code) async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client, verifier: ScriptedVerifier(availability: availability))
            await #expect(throws: BiometricLoginError(code, "")) { try await phone.login.enable(session: try await phone.signUp()) }
        }
    }

    @Test func enableFailsWhenTheServerDisallowsBiometrics() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.biometricsEnabled = false }) { client in
            let phone = Phone(client: client)
            await #expect(throws: BiometricLoginError(.notAvailable, "")) { try await phone.login.enable(session: try await phone.signUp()) }
        }
    }

    @Test func loginWithoutEnrolmentIsNotEnabled() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await phone.login.login(reason: "x") }
            #expect(await phone.verifier.promptCount == 0)
        }
    }

    @Test func aMissingKeyClearsTheEnrolment() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            try await phone.login.enable(session: try await phone.signUp())
            let enrollment = try #require(try await phone.enrollment())
            try await phone.keyStore.deleteKey(tag: enrollment.keyTag)  // as when Face ID is re-enrolled
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await phone.login.login(reason: "x") }
            #expect(try await phone.enrollment() == nil)
        }
    }

    @Test func enrolmentCarriesAnAppAttestProofWhenTheServerRequiresIt() async throws {
        let device = try TestAppAttestDevice(appId: "ABCDE12345.com.example.touchstone")
        let configuration = TestServer.configuration {
            $0.appAttest.appIds = ["ABCDE12345.com.example.touchstone"]
            $0.appAttest.environment = .development
            $0.appAttest.trustAnchors = [device.root]
            $0.appAttest.required = true
        }
        try await TestServer.run(configuration: configuration) { client in
            let provider = TestAppAttestProvider(device: device)
            let state = InMemoryStateStore()
            let login = BiometricLogin(
                client: TouchstoneClient(transport: TestClientTransport(client)),
                keyStore: SoftwareKeyStore(),
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: state,
                appAttest: provider
            )
            let session = try await login.client.createUser(email: "attested@example.com", password: Self.password)
            let registration = try await login.enable(session: session)
            #expect(registration.appAttested == true)
            _ = try await login.login(reason: "x")
            // The installation's key is attested once; later enrolments only assert with it.
            try await login.disable(session: session)
            let again = try await login.enable(session: try await login.client.signIn(email: "attested@example.com", password: Self.password))
            #expect(again.appAttested == true)
            #expect(await provider.generatedKeys == 1)
            #expect(try await state.appAttestKeyId() != nil)

            // An app without App Attest cannot enrol on this server.
            let plain = Phone(client: client)
            let plainSession = try await plain.signUp()
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "app_attest_required")) {
                try await plain.login.enable(session: plainSession)
            }
            // Nor can a device that does not support it.
            let unsupported = BiometricLogin(
                client: TouchstoneClient(transport: TestClientTransport(client)),
                keyStore: SoftwareKeyStore(),
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: InMemoryStateStore(),
                appAttest: TestAppAttestProvider(device: device, isSupported: false)
            )
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "app_attest_required")) {
                try await unsupported.enable(session: try await unsupported.client.signIn(email: plainSession.user.email, password: Self.password))
            }
        }
    }

    @Test func anInvalidatedKeyIsReportedToTheServerAndForgotten() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            let registration = try await phone.login.enable(session: session)
            let enrollment = try #require(try await phone.enrollment())
            await phone.keyStore.invalidateKey(tag: enrollment.keyTag)  // a fingerprint was added: iOS voids the key
            await #expect(throws: BiometricLoginError(.keyInvalidated, "")) { try await phone.login.login(reason: "x") }
            #expect(try await phone.enrollment() == nil)
            #expect(await !phone.keyStore.keyExists(tag: enrollment.keyTag))
            let listed = try await phone.login.client.registrations(token: session.session.token)
            #expect(listed.first { $0.id == registration.id }?.status == "invalidated")
            // Enabling again works and gives a new, active registration.
            let again = try await phone.login.enable(session: try await phone.login.client.signIn(email: session.user.email, password: Self.password))
            #expect(again.status == "active")
            _ = try await phone.login.login(reason: "x")
        }
    }

    @Test func aVanishedKeyIsReportedAsLost() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            let registration = try await phone.login.enable(session: session)
            let enrollment = try #require(try await phone.enrollment())
            try await phone.keyStore.deleteKey(tag: enrollment.keyTag)
            await #expect(throws: BiometricLoginError(.notEnabled, "")) { try await phone.login.login(reason: "x") }
            let listed = try await phone.login.client.registrations(token: session.session.token)
            #expect(listed.first { $0.id == registration.id }?.status == "invalidated")
        }
    }

    @Test func aRevokedRegistrationDeletesLocalStateWithADistinctError() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            let registration = try await phone.login.enable(session: session)
            let enrollment = try #require(try await phone.enrollment())
            try await phone.login.client.deleteRegistration(token: session.session.token, id: registration.id)  // from the web
            await #expect(throws: BiometricLoginError(.registrationRevoked, "", serverCode: "registration_revoked")) {
                try await phone.login.login(reason: "x")
            }
            #expect(try await phone.enrollment() == nil)
            #expect(await !phone.keyStore.keyExists(tag: enrollment.keyTag))
            #expect(await phone.verifier.promptCount == 1)  // no prompt for a login that could not succeed
        }
    }

    @Test func aReplacementOnAnotherDeviceRevokesThisOne() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.devicePolicy = .singleDevice }) { client in
            let phone = Phone(client: client)
            let tablet = Phone(client: client)
            let session = try await phone.signUp("single@example.com")
            try await phone.login.enable(session: session)
            let tabletSession = try await tablet.login.client.signIn(email: "single@example.com", password: Self.password)
            try await tablet.login.enable(session: tabletSession)
            await #expect(throws: BiometricLoginError(.registrationRevoked, "", serverCode: "registration_revoked")) {
                try await phone.login.login(reason: "x")
            }
            #expect(try await phone.login.status() == .notEnabled)
            _ = try await tablet.login.login(reason: "x")
        }
    }

    @Test func disableDeletesRemoteThenLocal() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            let enrollment = try #require(try await phone.enrollment())
            try await phone.login.disable(session: session)
            #expect(try await phone.enrollment() == nil)
            #expect(await !phone.keyStore.keyExists(tag: enrollment.keyTag))
            let registrations = try await phone.login.client.registrations(token: session.session.token)
            #expect(registrations.map(\.status) == ["revoked"])
            // And another account may now enable this device.
            try await phone.login.enable(session: try await phone.signUp())
        }
    }

    @Test func disableKeepsLocalStateWhenTheServerCannotBeReached() async throws {
        try await TestServer.run { client in
            let state = InMemoryStateStore()
            let keyStore = SoftwareKeyStore()
            let phone = Phone(client: client, state: state, keyStore: keyStore)
            let session = try await phone.signUp()
            try await phone.login.enable(session: session)
            let offline = BiometricLogin(
                client: TouchstoneClient(transport: UnreachableTransport()),
                keyStore: keyStore,
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: state
            )
            await #expect(throws: BiometricLoginError(.transport, "")) { try await offline.disable(session: session) }
            #expect(try await state.loadEnrollment() != nil)
        }
    }

    @Test func serverErrorsCarryTheirCode() async throws {
        try await TestServer.run { client in
            let api = TouchstoneClient(transport: TestClientTransport(client))
            _ = try await api.createUser(email: "dup@example.com", password: Self.password)
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "email_taken")) {
                try await api.createUser(email: "dup@example.com", password: Self.password)
            }
            do {
                _ = try await api.signIn(email: "dup@example.com", password: "wrong")
                Issue.record("expected an error")
            } catch let error as BiometricLoginError {
                #expect(error.httpStatus == 401)
                #expect(error.serverCode == "invalid_credentials")
            }
        }
    }
}

/// A transport for a server that cannot be reached.
struct UnreachableTransport: TouchstoneTransport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        throw URLError(.cannotConnectToHost)
    }
}

/// Names keys predictably and remembers the names.
final class TagRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var tags: [String] = []

    var issued: [String] {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.tags
    }

    func next() -> String {
        self.lock.lock()
        defer { self.lock.unlock() }
        let tag = "test-key-\(self.tags.count)"
        self.tags.append(tag)
        return tag
    }
}
