import Foundation
import Testing
import TouchstoneTesting

/// `touchstone clients ...` (issue #31, §1) through the built binary: registration with validated redirect URIs, a
/// confidential client's secret shown once and stored only as a hash, listing, secret rotation, deletion.
struct ClientCommandTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func clientsAreRegisteredListedRotatedAndDeleted() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let database = ["--database", "sqlite:\(path)"]
        let (status, output, errors) = try await BenchCommandTests.run(
            ["clients", "create", "--name", "Grafana", "--redirect-uri", "https://grafana.example.com/login/generic_oauth",
             "--redirect-uri", "http://127.0.0.1/cb", "--post-logout-redirect-uri", "https://grafana.example.com/",
             "--backchannel-logout-uri", "https://grafana.example.com/backchannel"] + database
        )
        #expect(status == 0, "\(errors)")
        let created = try Self.json(output)
        let id = try #require(created["clientId"] as? String)
        let secret = try #require(created["clientSecret"] as? String)
        #expect(secret.hasPrefix("tsc_") && secret.count > 40)
        #expect(created["name"] as? String == "Grafana")
        #expect(created["redirectUris"] as? [String] == ["https://grafana.example.com/login/generic_oauth", "http://127.0.0.1/cb"])
        #expect(created["postLogoutRedirectUris"] as? [String] == ["https://grafana.example.com/"])
        #expect(created["backchannelLogoutUri"] as? String == "https://grafana.example.com/backchannel")
        #expect(created["public"] as? Bool == false)
        #expect(created["firstParty"] as? Bool == false)
        #expect((created["createdAt"] as? String)?.hasSuffix("Z") == true)

        // A public, first-party client: no secret.
        let (publicStatus, publicOutput, _) = try await BenchCommandTests.run(
            ["clients", "create", "--name", "Phone app", "--redirect-uri", "com.example.app:/oauth2redirect", "--public", "--first-party"] + database
        )
        #expect(publicStatus == 0)
        let publicClient = try Self.json(publicOutput)
        #expect(publicClient["clientSecret"] == nil)
        #expect(publicClient["public"] as? Bool == true)
        #expect(publicClient["firstParty"] as? Bool == true)
        let publicId = try #require(publicClient["clientId"] as? String)

        // The list shows both and never a secret; the database holds only the hash.
        let (_, list, _) = try await BenchCommandTests.run(["clients", "list"] + database)
        let clients = try #require(try Self.json(list)["clients"] as? [[String: Any]])
        #expect(clients.compactMap { $0["clientId"] as? String } == [id, publicId])
        #expect(!list.contains(secret) && !list.contains("clientSecret"))
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let stored = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(stored.range(of: Data(secret.utf8)) == nil, "\(file) holds the secret")
        }

        // Rotation: a new secret, printed once; a public client has none to rotate.
        let (rotated, rotatedOutput, _) = try await BenchCommandTests.run(["clients", "rotate-secret", id] + database)
        #expect(rotated == 0)
        let newSecret = try #require(try Self.json(rotatedOutput)["clientSecret"] as? String)
        #expect(newSecret.hasPrefix("tsc_") && newSecret != secret)
        let (noSecret, _, noSecretErrors) = try await BenchCommandTests.run(["clients", "rotate-secret", publicId] + database)
        #expect(noSecret != 0)
        #expect(noSecretErrors.contains("public client has no secret"))

        // Deletion, once.
        let (deleted, _, _) = try await BenchCommandTests.run(["clients", "delete", id] + database)
        #expect(deleted == 0)
        let (again, _, againErrors) = try await BenchCommandTests.run(["clients", "delete", id] + database)
        #expect(again != 0)
        #expect(againErrors.contains("no client \(id)"))

        // Every change is in the audit trail.
        let (_, trail, _) = try await BenchCommandTests.run(["audit", "export"] + database)
        for type in ["oauth_client.created", "oauth_client.secret_rotated", "oauth_client.deleted"] {
            #expect(trail.contains("\"\(type)\""), "\(type)")
        }
    }

    @Test(arguments: [
        (["--redirect-uri", "http://app.example.com/cb"], "loopback"),
        (["--redirect-uri", "https://app.example.com/cb#x"], "fragment"),
        (["--redirect-uri", "javascript:alert(1)"], "scheme"),
        ([], "1 to 20 redirect URIs"),
        (["--redirect-uri", "https://app.example.com/cb", "--post-logout-redirect-uri", "ftp://x"], "post-logout"),
        (["--redirect-uri", "https://app.example.com/cb", "--backchannel-logout-uri", "com.example.app:/x"], "back-channel"),
    ])
    func aBadRegistrationExitsNonZeroWithTheReason(arguments: [String], says: String) async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let (status, output, errors) = try await BenchCommandTests.run(
            ["clients", "create", "--name", "App"] + arguments + ["--database", "sqlite:\(path)"])
        #expect(status != 0)
        #expect(output.isEmpty)
        #expect(errors.contains(says), "\(errors)")
    }
}
