import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// Passkey lists name the passkey provider from its AAGUID (the community list shipped as data).
struct AuthenticatorNameTests {
    static func uuidBytes(_ text: String) -> [UInt8] {
        let hex = text.filter { $0 != "-" }
        return stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    @Test func aKnownProviderIsNamedAndAnUnknownOneIsNot() async throws {
        try await TestServer.runWithAdminKey(configuration: PasskeyTests.configuration()) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            var google = PasskeyTests.Browser(client: client)
            google.authenticator.aaguid = Self.uuidBytes("ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4")
            let (_, named) = try await google.register(account.token)
            #expect(named.value("passkey", "authenticatorName") == "Google Password Manager")
            let (_, unnamed) = try await PasskeyTests.Browser(client: client).register(account.token)
            #expect(unnamed.any(["passkey", "authenticatorName"]) is NSNull)
            // In the user's list and the admin's view alike.
            let list = try await client.request(.get, "/v1/passkeys", token: account.token)
            let names = (list.json["passkeys"] as? [[String: Any]] ?? []).compactMap { $0["authenticatorName"] as? String }
            #expect(names == ["Google Password Manager"])
            let admin = try await client.request(.get, "/v1/admin/users/\(account.userId)", token: key)
            #expect((admin.json["passkeys"] as? [[String: Any]] ?? []).contains { $0["authenticatorName"] as? String == "Google Password Manager" })
        }
    }

    @Test func theShippedListIsWellFormed() {
        #expect(KnownAuthenticators.names.count >= 40)
        for (aaguid, name) in KnownAuthenticators.names {
            #expect(aaguid.count == 36 && aaguid == aaguid.lowercased() && UUID(uuidString: aaguid) != nil, "\(aaguid)")
            #expect(!name.isEmpty)
        }
        #expect(KnownAuthenticators.name(forAAGUID: "EA9B8D66-4D01-1D21-3CE4-B6B48CB575D4") == "Google Password Manager")
        #expect(KnownAuthenticators.name(forAAGUID: "00000000-0000-0000-0000-000000000000") == nil)
    }
}
