import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting
import TouchstoneWebAuthn

/// `/.well-known/apple-app-site-association` and `/.well-known/assetlinks.json`, from configuration, and the Android
/// apps' `android:apk-key-hash:` origins.
struct AppAssociationTests {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    static func configuration() throws -> TouchstoneConfiguration {
        var configuration = try TouchstoneConfiguration(environment: [
            "TOUCHSTONE_APPLE_APP_IDS": "ABCDE12345.com.example.app, ABCDE12345.com.example.app.beta",
            "TOUCHSTONE_ANDROID_APPS": "com.example.app:\(Self.fingerprint),com.example.app:\(String(repeating: "AB", count: 32))",
        ])
        configuration.port = 0
        configuration.database = .sqliteFile(path: TestServer.temporaryDatabasePath())
        configuration.bcryptCost = 4
        configuration.rateLimits.enabled = false
        configuration.passkeys.rpId = "app.example"
        configuration.passkeys.origins = ["https://app.example"]
        return configuration
    }

    @Test func theAppleFileListsTheAppsAsWebCredentials() async throws {
        try await TestServer.run(configuration: try Self.configuration()) { client in
            let response = try await client.request(.get, "/.well-known/apple-app-site-association")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            #expect(response.headers[.location] == nil)
            let apps = (response.json["webcredentials"] as? [String: Any])?["apps"] as? [String]
            #expect(apps == ["ABCDE12345.com.example.app", "ABCDE12345.com.example.app.beta"])
        }
    }

    @Test func theAndroidFileListsThePackageWithItsFingerprints() async throws {
        try await TestServer.run(configuration: try Self.configuration()) { client in
            let response = try await client.request(.get, "/.well-known/assetlinks.json")
            #expect(response.status == .ok)
            let statements = try #require(try JSONSerialization.jsonObject(with: response.body) as? [[String: Any]])
            #expect(statements.count == 1)
            #expect((statements[0]["relation"] as? [String])?.contains("delegate_permission/common.get_login_creds") == true)
            let target = try #require(statements[0]["target"] as? [String: Any])
            #expect(target["namespace"] as? String == "android_app")
            #expect(target["package_name"] as? String == "com.example.app")
            #expect(target["sha256_cert_fingerprints"] as? [String] == [Self.fingerprint, Array(repeating: "AB", count: 32).joined(separator: ":")])
        }
    }

    @Test func withoutConfigurationTheFilesAreEmpty() async throws {
        try await TestServer.run { client in
            let apple = try await client.request(.get, "/.well-known/apple-app-site-association")
            #expect((apple.json["webcredentials"] as? [String: Any])?["apps"] as? [String] == [])
            #expect(String(decoding: try await client.request(.get, "/.well-known/assetlinks.json").body, as: UTF8.self) == "[]")
        }
    }

    /// A passkey made in the Android app reports the app's signing certificate as its origin; it is accepted without
    /// listing it.
    @Test func theAndroidAppsOriginIsAccepted() async throws {
        let configuration = try Self.configuration()
        let app = try #require(configuration.passkeys.androidApps.first)
        let androidOrigin = "android:apk-key-hash:" + Base64.urlEncode(app.certificateSHA256)
        #expect(app.origin == androidOrigin)
        try await TestServer.run(configuration: configuration) { client in
            let account = try await Flow(client: client).signUp("android@example.com")
            let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            let (_, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(options.body), origin: androidOrigin)
            let verified = try await client.request(.post, "/v1/passkeys/registrations/verify", token: account.token, raw: String(decoding: response, as: UTF8.self))
            #expect(verified.status == .created, "\(String(decoding: verified.body, as: UTF8.self))")
            // Another app's hash is not.
            let options2 = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            let (_, other) = try VirtualAuthenticator().respond(
                toCreationOptions: Array(options2.body),
                origin: "android:apk-key-hash:" + Base64.urlEncode(Array(repeating: 7, count: 32))
            )
            let refused = try await client.request(.post, "/v1/passkeys/registrations/verify", token: account.token, raw: String(decoding: other, as: UTF8.self))
            #expect(refused.status == .badRequest)
        }
    }

    @Test(arguments: [
        ["TOUCHSTONE_APPLE_APP_IDS": "com.example.app"],
        ["TOUCHSTONE_APPLE_APP_IDS": "abcde12345.com.example.app"],
        ["TOUCHSTONE_ANDROID_APPS": "com.example.app"],
        ["TOUCHSTONE_ANDROID_APPS": "com.example.app:14:6D"],
        ["TOUCHSTONE_ANDROID_APPS": "notapackage:\(AppAssociationTests.fingerprint)"],
    ])
    func badSettingsAreRefused(environment: [String: String]) {
        #expect(throws: (any Error).self) { try TouchstoneConfiguration(environment: environment) }
    }
}
