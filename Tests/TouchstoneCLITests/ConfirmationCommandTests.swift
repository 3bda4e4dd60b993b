import Foundation
import Testing
import TouchstoneKit
import TouchstoneTesting

/// `touchstone device confirm` and `touchstone confirmation verify` against a real server, and the evidence checked
/// with openssl as docs/api.md shows.
struct ConfirmationCommandTests {
    static let password = "correct horse battery"

    static func run(_ arguments: [String]) async throws -> (Int32, String, String) {
        try await ChildProcess.run(
            try ServerProcess.binary.path,
            arguments,
            environment: ProcessInfo.processInfo.environment.merging(["TOUCHSTONE_PASSWORD": Self.password]) { $1 }
        )
    }

    static func post(_ base: URL, _ path: String, token: String, json: [String: Any]) async throws -> [String: Any] {
        let response = try await URLSessionTransport(baseURL: base).send(
            TransportRequest(
                method: "POST",
                path: path,
                headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                body: try JSONSerialization.data(withJSONObject: json)
            )
        )
        return try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
    }

    static func get(_ base: URL, _ path: String, token: String) async throws -> Data {
        try await URLSessionTransport(baseURL: base).send(
            TransportRequest(method: "GET", path: path, headers: ["Authorization": "Bearer \(token)"], body: nil)
        ).body
    }

    @Test func aSimulatedDeviceApprovesAndTheEvidenceVerifiesOffline() async throws {
        let path = BenchCommandTests.temporaryDatabase()
        defer { TemporaryFiles.remove(path) }
        let server = try await ServerProcess(database: "sqlite:\(path)")
        defer { server.stop() }
        let state = TemporaryFiles.path("device")
        defer { TemporaryFiles.remove(state) }
        let deviceArguments = ["--server", server.baseURL.absoluteString, "--state", state]
        let (enabled, _, enableErrors) = try await Self.run(["device", "enable", "--email", "cli-confirm@example.com", "--sign-up"] + deviceArguments)
        #expect(enabled == 0, "\(enableErrors)")

        let session = try await TouchstoneClient(baseURL: server.baseURL).signIn(email: "cli-confirm@example.com", password: Self.password)
        let created = try await Self.post(
            server.baseURL,
            "/v1/confirmations",
            token: session.session.token,
            json: ["summary": "Add payee ACME Ltd", "details": ["iban": "DE89370400440532013000"]]
        )
        let id = try #require((created["confirmation"] as? [String: Any])?["id"] as? String)

        let (confirmed, output, errors) = try await Self.run(["device", "confirm", id] + deviceArguments)
        #expect(confirmed == 0, "\(errors)")
        let approved = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect((approved["confirmation"] as? [String: Any])?["status"] as? String == "approved")
        #expect((approved["receipt"] as? String)?.split(separator: ".").count == 3)

        // The evidence, saved as the API answers it, verifies offline; a changed payload does not.
        let evidenceData = try await Self.get(server.baseURL, "/v1/confirmations/\(id)/evidence", token: session.session.token)
        let file = TemporaryFiles.path("evidence", suffix: ".json")
        defer { TemporaryFiles.remove(file) }
        try evidenceData.write(to: URL(fileURLWithPath: file))
        let (verified, verification, _) = try await Self.run(["confirmation", "verify", file])
        #expect(verified == 0, "\(verification)")
        #expect(verification.contains("\"summary\" : \"Add payee ACME Ltd\"") && verification.contains("\"verified\" : true"))

        var object = try #require(try JSONSerialization.jsonObject(with: evidenceData) as? [String: Any])
        var evidence = try #require(object["evidence"] as? [String: Any])
        evidence["payload"] = (evidence["payload"] as? String)?.replacingOccurrences(of: "ACME", with: "EVIL")
        object["evidence"] = evidence
        let tampered = TemporaryFiles.path("tampered", suffix: ".json")
        defer { TemporaryFiles.remove(tampered) }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: tampered))
        let (refused, refusal, _) = try await Self.run(["confirmation", "verify", tampered])
        #expect(refused == 1 && refusal.contains("\"verified\" : false"))

        // Not evidence at all; a payload without the summary the app shows.
        let (notEvidence, _, notEvidenceErrors) = try await Self.run(["confirmation", "verify", path])
        #expect(notEvidence != 0 && notEvidenceErrors.contains("is not confirmation evidence"))
        let (noSummary, _, noSummaryErrors) = try await Self.run(["device", "confirm", id, "--payload", "{}"] + deviceArguments)
        #expect(noSummary != 0 && noSummaryErrors.contains("--payload needs --summary"), "\(noSummaryErrors)")

        // openssl, as docs/api.md shows: the payload's bytes, the DER signature, the SPKI key.
        let original = try #require(try JSONSerialization.jsonObject(with: evidenceData) as? [String: Any])["evidence"] as? [String: Any]
        let directory = TemporaryFiles.path("openssl")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { TemporaryFiles.remove(directory) }
        func unbase64url(_ text: String) -> Data {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            return Data(base64Encoded: base64)!
        }
        try Data(try #require(original?["payload"] as? String).utf8).write(to: URL(fileURLWithPath: "\(directory)/payload.txt"))
        try unbase64url(try #require(original?["signature"] as? String)).write(to: URL(fileURLWithPath: "\(directory)/signature.der"))
        try unbase64url(try #require(original?["publicKey"] as? String)).write(to: URL(fileURLWithPath: "\(directory)/key.der"))
        let (openssl, opensslOutput, opensslErrors) = try await ChildProcess.run(
            "/usr/bin/env",
            ["openssl", "dgst", "-sha256", "-verify", "\(directory)/key.der", "-keyform", "DER", "-signature", "\(directory)/signature.der",
             "\(directory)/payload.txt"]
        )
        #expect(openssl == 0 && opensslOutput.contains("Verified OK"), "\(opensslOutput) \(opensslErrors)")
    }
}
