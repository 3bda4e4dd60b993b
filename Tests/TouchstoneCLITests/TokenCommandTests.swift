import Foundation
import Testing
import TouchstoneKit
import TouchstoneTesting

/// `touchstone keys list|rotate` and `touchstone token inspect` against a real server.
struct TokenCommandTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func jwksKids(_ server: ServerProcess) async throws -> Set<String> {
        let response = try await URLSessionTransport(baseURL: server.baseURL).send(
            TransportRequest(method: "GET", path: "/.well-known/jwks.json", headers: [:], body: nil)
        )
        let keys = (try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["keys"] as? [[String: Any]] ?? []
        return Set(keys.compactMap { $0["kid"] as? String })
    }

    @Test func keysAreListedAndRotatedAndARunningServerPublishesTheNewKey() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        defer { server.stop() }
        let (listed, list, listErrors) = try await BenchCommandTests.run(["keys", "list", "--database", "sqlite:\(path)"])
        #expect(listed == 0, "\(listErrors)")
        let lines = list.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("ES256") && lines[0].contains("active") && lines[0].contains("published"))

        let (rotated, made, rotateErrors) = try await BenchCommandTests.run(["keys", "rotate", "--database", "sqlite:\(path)"])
        #expect(rotated == 0, "\(rotateErrors)")
        #expect(made.contains("generation 2") && made.contains("pending"))
        let newKid = try #require(made.split(separator: " ").first.map(String.init))
        // The server reads the key set again within 10 s and publishes the new key before it signs.
        let deadline = Date().addingTimeInterval(15)
        while try await !Self.jwksKids(server).contains(newKid) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(try await Self.jwksKids(server).contains(newKid))

        let (urgent, now, _) = try await BenchCommandTests.run(["keys", "rotate", "--immediately", "--database", "sqlite:\(path)"])
        #expect(urgent == 0 && now.contains("generation 3") && now.contains("active"))
        let (_, after, _) = try await BenchCommandTests.run(["keys", "list", "--database", "sqlite:\(path)"])
        #expect(after.split(separator: "\n").count == 3)
        let (_, trail, _) = try await BenchCommandTests.run([
            "audit", "export", "--since", "2000-01-01T00:00:00Z", "--type", "signing_key.rotated", "--database", "sqlite:\(path)",
        ])
        #expect(trail.split(separator: "\n").count == 2 && trail.contains("by cli"))
    }

    @Test func tokenInspectShowsTheTokenAndChecksItAgainstTheIssuer() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)", environment: ["TOUCHSTONE_ISSUER": "https://auth.example.test"])
        defer { server.stop() }
        let api = TouchstoneClient(baseURL: server.baseURL)
        let session = try await api.createUser(email: "inspect@example.com", password: "correct horse battery")
        let token = try await api.accessToken(for: session)
        let jwks = server.baseURL.appendingPathComponent(".well-known/jwks.json").absoluteString

        // Without an issuer: header and claims, no verdict.
        let (plain, shown, _) = try await BenchCommandTests.run(["token", "inspect", token])
        #expect(plain == 0)
        let plainOutput = try Self.json(shown)
        #expect((plainOutput["header"] as? [String: Any])?["typ"] as? String == "at+jwt")
        #expect((plainOutput["claims"] as? [String: Any])?["sub"] as? String == session.user.id)
        #expect(plainOutput["verification"] == nil)

        // With the issuer: verified.
        let issuerArguments = ["--issuer", "https://auth.example.test", "--jwks-url", jwks]
        let (good, verified, goodErrors) = try await BenchCommandTests.run(["token", "inspect", token] + issuerArguments)
        #expect(good == 0, "\(goodErrors)")
        #expect((try Self.json(verified)["verification"] as? [String: Any])?["verified"] as? Bool == true)

        // Each failure: exit 1 with the step's code.
        let parts = token.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + parts[1] + "." + String(parts[2].reversed())
        let cases: [([String], String)] = [
            (["token", "inspect", tampered] + issuerArguments, "invalid_signature"),
            (["token", "inspect", token, "--issuer", "https://elsewhere.example", "--jwks-url", jwks], "wrong_issuer"),
            (["token", "inspect", token, "--audience", "https://billing.example"] + issuerArguments, "wrong_audience"),
        ]
        for (arguments, code) in cases {
            let (status, output, _) = try await BenchCommandTests.run(arguments)
            #expect(status == 1, "\(code)")
            #expect((try Self.json(output)["verification"] as? [String: Any])?["code"] as? String == code)
        }
        // Not a JWT at all.
        let (bad, _, badErrors) = try await BenchCommandTests.run(["token", "inspect", "hello"])
        #expect(bad != 0 && badErrors.contains("not a JWT"))
    }
}
