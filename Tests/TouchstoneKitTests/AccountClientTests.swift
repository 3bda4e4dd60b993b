import Foundation
import HummingbirdTesting
import Testing
import TouchstoneKit
import TouchstoneServer
import TouchstoneTesting

/// The SDK's calls for the account as its owner's (issue #42) against the real server (in process).
struct AccountClientTests {
    @Test func sessionsExportAndDeletion() async throws {
        try await TestServer.run { client in
            let api = TouchstoneClient(transport: TestClientTransport(client))
            let first = try await api.createUser(email: "sdk-account@example.com", password: "correct horse battery")
            let second = try await api.signIn(email: "sdk-account@example.com", password: "correct horse battery")
            let third = try await api.signIn(email: "sdk-account@example.com", password: "correct horse battery")

            let sessions = try await api.sessions(token: first.session.token)
            #expect(sessions.count == 3 && sessions.filter(\.current).count == 1)
            let other = try #require(sessions.first { !$0.current })
            try await api.endSession(id: other.id, token: first.session.token)
            #expect(try await api.sessions(token: first.session.token).count == 2)
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "session_not_found")) {
                try await api.endSession(id: other.id, token: first.session.token)
            }
            #expect(try await api.signOutOtherSessions(token: first.session.token) == 1)
            for ended in [second, third] {
                await #expect(throws: BiometricLoginError.self) { _ = try await api.currentSession(token: ended.session.token) }
            }

            let export = try await api.exportAccountData(token: first.session.token)
            let document = try #require(try JSONSerialization.jsonObject(with: export) as? [String: Any])
            #expect((document["user"] as? [String: Any])?["email"] as? String == "sdk-account@example.com")
            #expect(!String(decoding: export, as: UTF8.self).contains(first.session.token))

            await #expect(throws: BiometricLoginError(.server, "", serverCode: "email_mismatch")) {
                try await api.deleteAccount(confirmEmail: "someone@example.com", token: first.session.token)
            }
            try await api.deleteAccount(confirmEmail: "sdk-account@example.com", token: first.session.token)
            await #expect(throws: BiometricLoginError(.server, "", serverCode: "invalid_credentials")) {
                _ = try await api.signIn(email: "sdk-account@example.com", password: "correct horse battery")
            }
        }
    }
}
