import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting
import TouchstoneWebAuthn

/// FIDO Metadata Service through the HTTP API: a BLOB from a file or a URL, shared through the database, used for
/// attestation trust, status reports, certified-only and authenticator names.
struct AuthenticatorMetadataTests {
    /// The model the tests' authenticator claims to be (Google Password Manager's AAGUID, so the community list knows
    /// it too and metadata must win).
    static let aaguid = "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"
    static let icon = "data:image/png;base64,iVBORw0KGgo="

    /// A metadata service, an attestation root for the model, and the files a server reads.
    struct Fixture {
        let service: TestMetadataService
        let attestationRoot: TestAttestationCA
        let blobFile = TemporaryFiles.path("mds", suffix: ".jwt")

        init() throws {
            self.service = try TestMetadataService(rsa: true)
            self.attestationRoot = try TestAttestationCA()
        }

        /// Writes BLOB `number` describing the model with `statuses`.
        func write(number: Int, nextUpdate: String = "2027-02-01", statuses: [(String, String)] = [("FIDO_CERTIFIED_L1", "2025-01-01")])
            throws
        {
            let entry = try TestMetadataService.entry(
                aaguid: AuthenticatorMetadataTests.aaguid,
                description: "Metadata Key",
                icon: AuthenticatorMetadataTests.icon,
                roots: [self.attestationRoot.certificate],
                statuses: statuses
            )
            try self.service.blob(number: number, nextUpdate: nextUpdate, entries: [entry])
                .write(toFile: self.blobFile, atomically: true, encoding: .utf8)
        }

        func configuration(_ customize: (inout TouchstoneConfiguration) -> Void = { _ in }) -> TouchstoneConfiguration {
            PasskeyTests.configuration {
                $0.metadata.file = self.blobFile
                $0.metadata.roots = [self.service.root]
                $0.passkeys.attestation = "direct"
                customize(&$0)
            }
        }
    }

    /// Registers a passkey of the model, with packed attestation from `issuer` (or none).
    static func register(_ client: any TestClientProtocol, token: String, issuer: TestAttestationCA?) async throws -> JSONTestResponse {
        let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: token, json: [:])
        var authenticator = VirtualAuthenticator()
        authenticator.aaguid = AuthenticatorNameTests.uuidBytes(Self.aaguid)
        let (_, none) = try authenticator.respond(toCreationOptions: Array(options.body), origin: PasskeyTests.origin)
        let body = try issuer.map { try $0.packedResponse(from: none) } ?? none
        return try await client.request(.post, "/v1/passkeys/registrations/verify", token: token, raw: String(decoding: body, as: UTF8.self))
    }

    static func text(_ response: JSONTestResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func aFileBLOBGivesTrustNamesAndIcons() async throws {
        let fixture = try Fixture()
        defer { TemporaryFiles.remove(fixture.blobFile) }
        try fixture.write(number: 3)
        try await TestServer.runWithAdminKey(configuration: fixture.configuration()) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            let registered = try await Self.register(client, token: account.token, issuer: fixture.attestationRoot)
            #expect(registered.status == .created, "\(Self.text(registered))")
            // Metadata's name wins over the community list's "Google Password Manager".
            #expect(registered.value("passkey", "authenticatorName") == "Metadata Key")
            #expect(registered.value("passkey", "authenticatorIcon") == Self.icon)
            let list = try await client.request(.get, "/v1/passkeys", token: account.token)
            #expect((list.json["passkeys"] as? [[String: Any]])?.first?["authenticatorName"] as? String == "Metadata Key")
            // The model's roots are its trust anchors: an attestation from another root claiming the model fails.
            let impostor = try await Self.register(client, token: account.token, issuer: try TestAttestationCA())
            #expect(impostor.status == .badRequest)
            #expect(HardeningTests.Hostile.message(impostor).hasPrefix("untrusted_attestation: "))
            // The admin API: the BLOB in use, the model's status on the user's passkeys.
            let report = try await client.request(.get, "/v1/admin/authenticator-metadata", token: key)
            #expect(report.status == .ok)
            #expect(report.json["loaded"] as? Bool == true)
            #expect(report.json["number"] as? Int == 3)
            #expect(report.json["nextUpdate"] as? String == "2027-02-01")
            #expect(report.json["stale"] as? Bool == false)
            #expect(report.json["entries"] as? Int == 1)
            #expect(report.json["source"] as? String == fixture.blobFile)
            #expect((report.json["affectedPasskeys"] as? [Any])?.isEmpty == true)
            let user = try await client.request(.get, "/v1/admin/users/\(account.userId)", token: key)
            let status = (user.json["passkeys"] as? [[String: Any]])?.first?["authenticatorStatus"] as? [String: Any]
            #expect(status?["status"] as? String == "FIDO_CERTIFIED_L1")
            #expect(status?["certified"] as? Bool == true)
            #expect(status?["refusedStatus"] is NSNull || status?["refusedStatus"] == nil)
        }
    }

    @Test func aCompromiseRefusesRegistrationAndIsReportedForExistingPasskeys() async throws {
        let fixture = try Fixture()
        defer { TemporaryFiles.remove(fixture.blobFile) }
        try fixture.write(number: 1)
        try await TestServer.runWithAdminKey(configuration: fixture.configuration()) { client, key, _ in
            let account = try await Flow(client: client).signUp()
            let first = try await Self.register(client, token: account.token, issuer: fixture.attestationRoot)
            #expect(first.status == .created)
            let passkeyId = try #require(first.value("passkey", "id"))
            // The FIDO Alliance reports the model compromised; the operator refreshes now.
            try fixture.write(number: 2, statuses: [("FIDO_CERTIFIED_L1", "2025-01-01"), ("USER_VERIFICATION_BYPASS", "2026-12-01")])
            let refreshed = try await client.request(.post, "/v1/admin/authenticator-metadata/refresh", token: key)
            #expect(refreshed.status == .ok)
            #expect(refreshed.json["number"] as? Int == 2)
            let affected = try #require(refreshed.json["affectedPasskeys"] as? [[String: Any]])
            #expect(affected.count == 1)
            #expect(affected.first?["userId"] as? String == account.userId)
            let passkey = affected.first?["passkey"] as? [String: Any]
            #expect(passkey?["id"] as? String == passkeyId)
            let status = passkey?["authenticatorStatus"] as? [String: Any]
            #expect(status?["refusedStatus"] as? String == "USER_VERIFICATION_BYPASS")
            #expect(status?["refusedSince"] as? String == "2026-12-01")
            // A new registration of the model is refused.
            let second = try await Self.register(client, token: account.token, issuer: fixture.attestationRoot)
            #expect(second.status == .forbidden)
            #expect(second.errorCode == "authenticator_not_allowed")
            #expect(HardeningTests.Hostile.message(second).hasPrefix("authenticator_status_refused: "))
            // An older BLOB put back in the file is refused: the newer one stays in use.
            try fixture.write(number: 1)
            let downgraded = try await client.request(.post, "/v1/admin/authenticator-metadata/refresh", token: key)
            #expect(downgraded.json["number"] as? Int == 2)
            #expect((downgraded.json["lastError"] as? String)?.contains("older") == true)
        }
    }

    @Test func aPolicyRefusingNothingOnlyReports() async throws {
        let fixture = try Fixture()
        defer { TemporaryFiles.remove(fixture.blobFile) }
        try fixture.write(number: 1, statuses: [("FIDO_CERTIFIED_L1", "2025-01-01"), ("USER_KEY_REMOTE_COMPROMISE", "2026-12-01")])
        try await TestServer.run(configuration: fixture.configuration { $0.metadata.refusedStatuses = [] }) { client in
            let account = try await Flow(client: client).signUp()
            #expect(try await Self.register(client, token: account.token, issuer: fixture.attestationRoot).status == .created)
        }
    }

    @Test func certifiedOnlyAcceptsCertifiedModelsWithTheirAttestation() async throws {
        let fixture = try Fixture()
        defer { TemporaryFiles.remove(fixture.blobFile) }
        try fixture.write(number: 1)
        try await TestServer.run(configuration: fixture.configuration { $0.metadata.requireCertified = true }) { client in
            let account = try await Flow(client: client).signUp()
            let options = try await client.request(.post, "/v1/passkeys/registrations/options", token: account.token, json: [:])
            #expect(options.value("attestation") == "direct")
            #expect(try await Self.register(client, token: account.token, issuer: fixture.attestationRoot).status == .created)
            let unattested = try await Self.register(client, token: account.token, issuer: nil)
            #expect(unattested.status == .forbidden)
            #expect(unattested.errorCode == "authenticator_not_allowed")
            #expect(HardeningTests.Hostile.message(unattested).hasPrefix("uncertified_authenticator: "))
        }
    }

    @Test func aStaleBLOBIsNotLoadedAndCertifiedOnlyThenFailsClosed() async throws {
        let fixture = try Fixture()
        defer { TemporaryFiles.remove(fixture.blobFile) }
        try fixture.write(number: 1, nextUpdate: "2027-01-01")  // the clock says 2027-01-15
        try await TestServer.runWithAdminKey(configuration: fixture.configuration { $0.metadata.requireCertified = true }) { client, key, _ in
            let report = try await client.request(.get, "/v1/admin/authenticator-metadata", token: key)
            #expect(report.json["loaded"] as? Bool == false)
            #expect((report.json["lastError"] as? String)?.hasPrefix("stale") == true)
            let account = try await Flow(client: client).signUp()
            let response = try await Self.register(client, token: account.token, issuer: fixture.attestationRoot)
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "authenticator_metadata_unavailable")
        }
    }

    @Test func instancesShareTheStoredBLOB() async throws {
        let fixture = try Fixture()
        defer { TemporaryFiles.remove(fixture.blobFile) }
        try fixture.write(number: 5)
        let database = TemporaryFiles.path("mds-shared", suffix: ".sqlite")
        defer { TemporaryFiles.remove(database) }
        // Each application closes its store when it stops: each instance opens its own on the one database, and
        // they share a key-encryption key as instances must.
        let kek = [UInt8](repeating: 7, count: 32)
        let first = try await SQLTouchstoneStore.sqlite(.file(path: database), logger: Logger(label: "test"))
        try await first.migrate()
        // The instance with the source stores the BLOB...
        try await TestServer.run(configuration: fixture.configuration { $0.tokens.keyEncryptionKey = kek }, store: first) { _ in }
        let store = try await SQLTouchstoneStore.sqlite(.file(path: database), logger: Logger(label: "test"))
        #expect(try await store.metadataBLOB()?.number == 5)
        let (key, _) = try await AdminKeys.create(name: "ops", store: store)
        // ...and one without a source uses it, with its roots configured the same.
        let other = PasskeyTests.configuration {
            $0.metadata.roots = [fixture.service.root]
            $0.tokens.keyEncryptionKey = kek
        }
        try await TestServer.run(configuration: other, store: store) { client in
            let report = try await client.request(.get, "/v1/admin/authenticator-metadata", token: key)
            #expect(report.json["number"] as? Int == 5)
            #expect(report.json["source"] as? String == fixture.blobFile)
            let account = try await Flow(client: client).signUp()
            let registered = try await Self.register(client, token: account.token, issuer: fixture.attestationRoot)
            #expect(registered.value("passkey", "authenticatorName") == "Metadata Key")
        }
    }

    @Test func aURLSourceIsFetchedOverHTTP() async throws {
        let fixture = try Fixture()
        defer { TemporaryFiles.remove(fixture.blobFile) }
        try fixture.write(number: 8)
        let blob = try String(contentsOfFile: fixture.blobFile, encoding: .utf8)
        // A metadata service on loopback serving the BLOB as the FIDO Alliance does (the JWS as the body).
        let router = Router()
        router.get("/mds") { _, _ in Response(status: .ok, headers: [.contentType: "application/jwt"], body: .init(byteBuffer: .init(string: blob))) }
        router.get("/missing") { _, _ in Response(status: .notFound) }
        let mds = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await mds.test(.live) { mdsClient in
            let port = try #require(mdsClient.port)
            let configuration = PasskeyTests.configuration {
                $0.metadata.url = "http://127.0.0.1:\(port)/mds"
                $0.metadata.roots = [fixture.service.root]
            }
            try await TestServer.runWithAdminKey(configuration: configuration) { client, key, _ in
                // At start a URL is left to the background; the refresh fetches it.
                let before = try await client.request(.get, "/v1/admin/authenticator-metadata", token: key)
                #expect(before.json["loaded"] as? Bool == false)
                let after = try await client.request(.post, "/v1/admin/authenticator-metadata/refresh", token: key)
                #expect(after.json["number"] as? Int == 8, "\(Self.text(after))")
                #expect(after.json["source"] as? String == "http://127.0.0.1:\(port)/mds")
            }
            let missing = PasskeyTests.configuration {
                $0.metadata.url = "http://127.0.0.1:\(port)/missing"
                $0.metadata.roots = [fixture.service.root]
            }
            try await TestServer.runWithAdminKey(configuration: missing) { client, key, _ in
                let after = try await client.request(.post, "/v1/admin/authenticator-metadata/refresh", token: key)
                #expect(after.json["loaded"] as? Bool == false)
                #expect((after.json["lastError"] as? String)?.contains("404") == true)
            }
        }
    }

    @Test func configurationIsChecked() throws {
        let roots = TemporaryFiles.path("mds-roots", suffix: ".pem")
        defer { TemporaryFiles.remove(roots) }
        try TestMetadataService().rootPEM.write(toFile: roots, atomically: true, encoding: .utf8)
        let configuration = try TouchstoneConfiguration(environment: [
            "TOUCHSTONE_MDS_URL": "https://mds3.fidoalliance.org/",
            "TOUCHSTONE_MDS_ROOTS": roots,
            "TOUCHSTONE_MDS_REFUSED_STATUSES": "REVOKED, USER_VERIFICATION_BYPASS",
            "TOUCHSTONE_ATTESTATION": "direct",
            "TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS": "true",
            "TOUCHSTONE_MDS_RETRY_SECONDS": "600",
        ])
        #expect(configuration.metadata.url == "https://mds3.fidoalliance.org/")
        #expect(configuration.metadata.roots.count == 1)
        #expect(configuration.metadata.refusedStatuses == [.revoked, .userVerificationBypass])
        #expect(configuration.metadata.requireCertified)
        #expect(configuration.metadata.retryInterval == .seconds(600))
        // The defaults: the FIDO root, the five compromise statuses.
        let defaults = try TouchstoneConfiguration(environment: [:])
        #expect(defaults.metadata.roots.count == 1)
        #expect(defaults.metadata.refusedStatuses == AuthenticatorStatus.compromised)
        #expect(try TouchstoneConfiguration(environment: ["TOUCHSTONE_MDS_REFUSED_STATUSES": "none"]).metadata.refusedStatuses.isEmpty)
        let refused: [[String: String]] = [
            ["TOUCHSTONE_MDS_URL": "http://mds.example/"],  // plain HTTP beyond loopback
            ["TOUCHSTONE_MDS_URL": "not a url"],
            ["TOUCHSTONE_MDS_URL": "https://mds.example/", "TOUCHSTONE_MDS_FILE": "/tmp/blob.jwt"],
            ["TOUCHSTONE_MDS_ROOTS": "/nonexistent/roots.pem"],
            ["TOUCHSTONE_MDS_REFUSED_STATUSES": "COMPROMISED"],
            ["TOUCHSTONE_MDS_REFUSED_STATUSES": ""],
            ["TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS": "yes"],
            ["TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS": "true", "TOUCHSTONE_ATTESTATION": "direct"],  // no source
            ["TOUCHSTONE_REQUIRE_CERTIFIED_AUTHENTICATORS": "true", "TOUCHSTONE_MDS_FILE": "/tmp/blob.jwt"],  // attestation none
            ["TOUCHSTONE_MDS_RETRY_SECONDS": "5"],
        ]
        for environment in refused {
            #expect(throws: ConfigurationError.self, "\(environment)") { try TouchstoneConfiguration(environment: environment) }
        }
    }
}
