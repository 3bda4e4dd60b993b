import Foundation
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// `TouchstoneClient.accessToken(for:)`: cached while it has life left, one request for concurrent callers, and a
/// session that ended reported as such.
struct AccessTokenClientTests {
    /// Counts the token requests that reach the server.
    struct CountingTransport: TouchstoneTransport {
        let inner: TestClientTransport
        let tokenRequests = NIOLockedValueBox(0)

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.path == "/v1/session/token" {
                self.tokenRequests.withLockedValue { $0 += 1 }
                // Long enough that concurrent callers overlap.
                try await Task.sleep(for: .milliseconds(20))
            }
            return try await self.inner.send(request)
        }
    }

    @Test func aTokenIsReusedWhileItHasLifeLeft() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let transport = CountingTransport(inner: TestClientTransport(client))
            let api = TouchstoneClient(transport: transport, now: { clock.now })
            let session = try await api.createUser(email: "cache@example.com", password: "correct horse battery")
            let first = try await api.accessToken(for: session)
            clock.advance(by: 269)
            #expect(try await api.accessToken(for: session) == first)
            #expect(transport.tokenRequests.withLockedValue { $0 } == 1)
            // 30 s or less left: a new one.
            clock.advance(by: 1)
            let second = try await api.accessToken(for: session)
            #expect(second != first)
            #expect(transport.tokenRequests.withLockedValue { $0 } == 2)
            // A larger margin asks sooner.
            clock.advance(by: 100)
            _ = try await api.accessToken(for: session, minimumLifetime: 250)
            #expect(transport.tokenRequests.withLockedValue { $0 } == 3)
        }
    }

    @Test func concurrentCallersShareOneRequest() async throws {
        try await TestServer.run { client in
            let transport = CountingTransport(inner: TestClientTransport(client))
            let api = TouchstoneClient(transport: transport)
            let session = try await api.createUser(email: "together@example.com", password: "correct horse battery")
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<16 { group.addTask { try await api.accessToken(for: session) } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(transport.tokenRequests.withLockedValue { $0 } == 1)
        }
    }

    @Test func anEndedSessionIsReportedAsSuch() async throws {
        let clock = ManualClock()
        try await TestServer.run(clock: clock) { client in
            let api = TouchstoneClient(transport: TestClientTransport(client), now: { clock.now })
            let session = try await api.createUser(email: "ended@example.com", password: "correct horse battery")
            _ = try await api.accessToken(for: session)
            try await api.signOut(token: session.session.token)
            // The cached token still has life, so it is returned; a fresh one is refused.
            clock.advance(by: 280)
            await #expect(throws: BiometricLoginError(.sessionEnded, "", serverCode: "unauthenticated")) {
                try await api.accessToken(for: session)
            }
            do {
                _ = try await api.issueAccessToken(sessionToken: "not-a-session")
                Issue.record("an unknown session got a token")
            } catch let error as BiometricLoginError {
                #expect(error.code == .sessionEnded && error.httpStatus == 401)
            }
        }
    }
}
