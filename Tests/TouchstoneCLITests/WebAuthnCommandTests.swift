import Foundation
import Testing

/// `touchstone webauthn verify-*` on the specification's vectors, as a developer would paste a browser's JSON.
struct WebAuthnCommandTests {
    nonisolated(unsafe) static let vectors: [String: Any] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TouchstoneWebAuthnTests/Fixtures/w3c-webauthn-l3-section16.json")
        return (try? JSONSerialization.jsonObject(with: Data(contentsOf: url))) as? [String: Any] ?? [:]
    }()

    static func vector(_ kind: String, _ name: String) throws -> [String: Any] {
        let list = try #require(Self.vectors[kind] as? [[String: Any]])
        return try #require(list.first { $0["name"] as? String == name })
    }

    /// Runs the binary with `input` on stdin; returns the exit code and the parsed JSON it printed. The blocking pipe
    /// I/O runs on a thread of its own, off the cooperative pool.
    static func run(_ arguments: [String], input: [String: Any]) async throws -> (Int32, [String: Any]) {
        let process = Process()
        process.executableURL = try ServerProcess.binary
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let payload = try JSONSerialization.data(withJSONObject: input)
        let output: Data = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                stdin.fileHandleForWriting.write(payload)
                try? stdin.fileHandleForWriting.close()
                let output = stdout.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: output)
            }
        }
        let json = (try? JSONSerialization.jsonObject(with: output)) as? [String: Any] ?? [:]
        return (process.terminationStatus, json)
    }

    static func caFile() throws -> String {
        let der = try #require(Self.vectors["attestationCACertificateDER"] as? String)
        var base64 = der.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let body = try #require(Data(base64Encoded: base64)).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("touchstone-ca-\(UUID().uuidString).pem").path
        try "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func verifyRegistrationReportsTheAttestation() async throws {
        let vector = try Self.vector("registrations", "PackedES256WithMDS")
        let id = try #require(vector["credentialId"] as? String)
        let response: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key",
            "response": ["clientDataJSON": vector["clientDataJSON"]!, "attestationObject": vector["attestationObject"]!],
        ]
        let (status, output) = try await Self.run(
            [
                "webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org", "--challenge",
                try #require(vector["challenge"] as? String), "--trust-anchor", try Self.caFile(), "--at", "2025-06-01T00:00:00Z",
            ],
            input: response
        )
        #expect(status == 0)
        #expect(output["fmt"] as? String == "packed")
        #expect(output["attestationType"] as? String == "basic")
        #expect(output["attestationTrusted"] as? Bool == true)
        #expect(output["credentialId"] as? String == id)
        #expect(output["algorithm"] as? String == "ES256")
        #expect(output["publicKey"] is String)
    }

    @Test func verifyAuthenticationReportsTheCounterAndFailsWithTheStepCode() async throws {
        let vector = try Self.vector("authentications", "PackedES256Full")
        let id = try #require(vector["credentialId"] as? String)
        let response: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key",
            "response": [
                "clientDataJSON": vector["clientDataJSON"]!, "authenticatorData": vector["authenticatorData"]!,
                "signature": vector["signature"]!,
            ],
        ]
        let arguments = [
            "webauthn", "verify-authentication", "--rp-id", "example.org", "--challenge", try #require(vector["challenge"] as? String),
            "--public-key", try #require(vector["credentialPublicKeyCOSE"] as? String),
        ]
        let (status, output) = try await Self.run(arguments + ["--origin", "https://example.org"], input: response)
        #expect(status == 0)
        #expect(output["cloneWarning"] as? Bool == false)
        #expect(output["userVerified"] is Bool)

        let (failed, error) = try await Self.run(arguments + ["--origin", "https://other.example"], input: response)
        #expect(failed == 1)
        #expect((error["error"] as? [String: Any])?["code"] as? String == "origin_not_allowed")

        let (malformed, garbage) = try await Self.run(arguments + ["--origin", "https://example.org"], input: ["nope": 1])
        #expect(malformed == 1)
        #expect((garbage["error"] as? [String: Any])?["code"] as? String == "malformed")
    }
}
