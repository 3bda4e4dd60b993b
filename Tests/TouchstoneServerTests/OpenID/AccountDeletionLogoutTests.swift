import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TouchstoneServer
import TouchstoneTesting

/// Deleting an account announces the end of its sessions to the OpenID clients holding tokens from them (issue #42:
/// before, the admin's deletion sent no back-channel logout, because the token families went with the user).
struct AccountDeletionLogoutTests {
    @Test func theAdminsDeletionSendsTheClientsABackChannelLogout() async throws {
        let receiver = TokenLifecycleTests.Receiver()
        try await TestServer.runWithAdminKey(postForm: receiver.post) { client, key, _ in
            let app = try await client.registerClient(key: key, firstParty: true, backchannel: "https://app.example.com/backchannel")
            let (email, userId) = try await AuthorizationCodeFlowTests.signUp(client)
            var browser = OpenIDBrowser(client)
            let tokens = try await TokenLifecycleTests.tokens(client, app, &browser, email: email)
            let sid = try #require(jwtPayload(tokens.value("id_token") ?? "")["sid"] as? String)

            #expect(try await client.request(.delete, "/v1/admin/users/\(userId)", token: key).status == .noContent)
            #expect(await receiver.next())
            let (url, body) = try #require(receiver.posts.withLockedValue { $0.first })
            #expect(url == "https://app.example.com/backchannel")
            let claims = jwtPayload(String(body.dropFirst("logout_token=".count)).removingPercentEncoding ?? "")
            #expect(claims["sid"] as? String == sid && claims["sub"] as? String == userId && claims["aud"] as? String == app.id)
            // The refresh token died with the account.
            let refresh = try await TokenLifecycleTests.refresh(client, app, try #require(tokens.value("refresh_token")))
            #expect(refresh.value("error") == "invalid_grant")
        }
    }
}
