import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// The SDK's proof key and bound sessions (issue #43) against the real server, in process: enrolment registers the
/// proof key, sign-ins give sessions the client sends with DPoP proofs, a copy of the token is worthless elsewhere.
struct DPoPClientTests {
    typealias Phone = BiometricLoginTests.Phone

    /// Records requests, adds the server's clock as `Date` (as a real server does), and can move the phone's clock.
    struct RecordingTransport: TouchstoneTransport {
        let inner: TestClientTransport
        let serverClock: ManualClock
        let requests = NIOLockedValueBox<[TransportRequest]>([])
        var serverURL: URL? { self.inner.serverURL }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            self.requests.withLockedValue { $0.append(request) }
            var response = try await self.inner.send(request)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            response.headers["Date"] = formatter.string(from: self.serverClock.now)
            return response
        }
    }

    @Test func aBiometricSessionIsBoundToTheProofKeyAndWorthlessWithoutIt() async throws {
        try await TestServer.run { client in
            let phone = Phone(client: client)
            let account = try await phone.signUp()
            let registration = try await phone.login.enable(session: account)
            let enrollment = try #require(try await phone.enrollment())
            let thumbprint = try #require(registration.proofKeyThumbprint)
            #expect(enrollment.proofKeyTag == enrollment.keyTag)
            #expect(try await phone.keyStore.proofKeyPublicKey(tag: enrollment.keyTag)?.thumbprint == thumbprint)

            let session = try await phone.login.login(reason: "Sign in")
            #expect(await phone.login.client.isBound(session))
            #expect(try await phone.login.client.currentSession(token: session.session.token).user.id == account.user.id)
            // The password session that enabled it stays a bearer session.
            #expect(!(await phone.login.client.isBound(account)))
            // The same token from anywhere else (another client, a script) is refused.
            let elsewhere = TouchstoneClient(transport: TestClientTransport(client))
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "invalid_dpop_proof")) {
                _ = try await elsewhere.currentSession(token: session.session.token)
            }
            let stolen = try await client.request(.get, "/v1/session", token: session.session.token)
            #expect(stolen.status == .unauthorized && stolen.errorCode == "invalid_dpop_proof")

            // Its access tokens are bound to the key too; the headers for the app's own API carry a proof.
            let accessToken = try await phone.login.client.accessToken(for: session)
            let claims = try #require(try? JSONSerialization.jsonObject(
                with: Data(Base64.urlDecodeCanonical(String(accessToken.split(separator: ".")[1])) ?? [])) as? [String: Any])
            #expect((claims["cnf"] as? [String: String])?["jkt"] == thumbprint)
            let headers = try await phone.login.client.authorizationHeaders(
                for: session, accessToken: accessToken, method: "GET", url: URL(string: "https://api.example.com/me?x=1")!)
            #expect(headers["Authorization"] == "DPoP \(accessToken)" && headers["DPoP"] != nil)

            // Disabling forgets the proof key with the device key.
            try await phone.login.disable(session: session)
            #expect(try await phone.keyStore.proofKeyPublicKey(tag: enrollment.keyTag) == nil)
        }
    }

    @Test func theClientRetriesOnceWithTheServersNonceAndCorrectsItsClock() async throws {
        let serverClock = ManualClock()
        let configuration = TestServer.configuration { $0.dpop.requireNonce = true }
        try await TestServer.run(configuration: configuration, clock: serverClock) { client in
            let transport = RecordingTransport(inner: TestClientTransport(client), serverClock: serverClock)
            // The phone's clock is 10 minutes behind the server's.
            let api = TouchstoneClient(transport: transport, now: { serverClock.now.addingTimeInterval(-600) })
            let login = BiometricLogin(client: api, keyStore: SoftwareKeyStore(), verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: InMemoryStateStore())
            let account = try await api.createUser(email: "nonce@example.com", password: BiometricLoginTests.password)
            _ = try await login.enable(session: account)
            let session = try await login.login(reason: "Sign in")
            transport.requests.withLockedValue { $0.removeAll() }
            _ = try await api.currentSession(token: session.session.token)
            // Refused as too old, then for want of a nonce (or the other way round), then answered: three tries at most.
            let tries = transport.requests.withLockedValue { $0.filter { $0.path == "/v1/session" } }
            #expect((2...3).contains(tries.count), "\(tries.count) tries")
            #expect(tries.allSatisfy { $0.headers["Authorization"]?.hasPrefix("DPoP ") == true && $0.headers["DPoP"] != nil })
            // Learnt: the next call goes through at once.
            transport.requests.withLockedValue { $0.removeAll() }
            _ = try await api.currentSession(token: session.session.token)
            #expect(transport.requests.withLockedValue { $0.count } == 1)
        }
    }

    /// A key store without proof keys (as an older SDK enrolled).
    struct PlainKeyStore: DeviceKeyStore {
        let inner: SoftwareKeyStore
        var supportedAlgorithms: [SignatureAlgorithm] { self.inner.supportedAlgorithms }
        func createKey(tag: String, algorithm: SignatureAlgorithm, policy: KeyAccessPolicy) async throws -> DeviceKeyPublicKey {
            try await self.inner.createKey(tag: tag, algorithm: algorithm, policy: policy)
        }
        func sign(_ message: [UInt8], withKey tag: String, verification: UserVerification) async throws -> [UInt8] {
            try await self.inner.sign(message, withKey: tag, verification: verification)
        }
        func deleteKey(tag: String) async throws { try await self.inner.deleteKey(tag: tag) }
        func keyExists(tag: String) async -> Bool { await self.inner.keyExists(tag: tag) }
    }

    @Test func anEnrolmentWithoutAProofKeyGetsOneAndItsSessionsAreBoundFromThen() async throws {
        try await TestServer.run { client in
            let keys = SoftwareKeyStore(), state = InMemoryStateStore()
            let api = TouchstoneClient(transport: TestClientTransport(client), now: { ManualClock().now })
            let old = BiometricLogin(client: api, keyStore: PlainKeyStore(inner: keys), verifier: ScriptedVerifier.alwaysApprove(), stateStore: state)
            let account = try await api.createUser(email: "upgrade@example.com", password: BiometricLoginTests.password)
            let registration = try await old.enable(session: account)
            #expect(registration.proofKeyThumbprint == nil)
            let bearer = try await old.login(reason: "Sign in")
            #expect(!(await api.isBound(bearer)))

            let upgraded = BiometricLogin(client: api, keyStore: keys, verifier: ScriptedVerifier.alwaysApprove(), stateStore: state)
            let added = try await upgraded.addProofKey(session: bearer)
            #expect(added.proofKeyThumbprint != nil)
            #expect(await api.isBound(bearer))
            #expect(try await api.currentSession(token: bearer.session.token).user.id == account.user.id)
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "proof_key_exists")) { _ = try await upgraded.addProofKey(session: bearer) }
            let next = try await upgraded.login(reason: "Sign in")
            #expect(await api.isBound(next))
            // A session kept from an earlier launch is bound again by resume.
            let relaunched = TouchstoneClient(transport: TestClientTransport(client), now: { ManualClock().now })
            let again = BiometricLogin(client: relaunched, keyStore: keys, verifier: ScriptedVerifier.alwaysApprove(), stateStore: state)
            try await again.resume(next)
            #expect(try await relaunched.currentSession(token: next.session.token).user.id == account.user.id)
        }
    }
}
