import Crypto
import Foundation
import SwiftASN1
import Testing
import TouchstoneCrypto
import TouchstoneWebAuthn
import X509
import TouchstoneTesting

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
        let payload = try JSONSerialization.data(withJSONObject: input)
        let (status, output, _) = try await ChildProcess.run(try ServerProcess.binary.path, arguments, input: Array(payload))
        let json = (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any] ?? [:]
        return (status, json)
    }

    static func caFile() throws -> String {
        let der = try #require(Self.vectors["attestationCACertificateDER"] as? String)
        var base64 = der.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let body = try #require(Data(base64Encoded: base64)).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let path = TemporaryFiles.path("touchstone-ca", suffix: ".pem")
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
        let caFile = try Self.caFile()
        defer { TemporaryFiles.remove(caFile) }
        let (status, output) = try await Self.run(
            [
                "webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org", "--challenge",
                try #require(vector["challenge"] as? String), "--trust-anchor", caFile, "--at", "2025-06-01T00:00:00Z",
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

/// Issue #12, items 6 and 8: base64url values that begin with "-", and trust anchors that must be reached.
struct WebAuthnCommandHardeningTests {
    /// A passkey registered and asserted by the virtual authenticator with a challenge and user handle whose base64url
    /// begins with "-" (a first byte of 0xF8 to 0xFB encodes as "-").
    static func assertion(flags: AuthenticatorData.Flags? = nil) -> (challenge: String, userHandle: String, publicKey: String, response: [String: Any]) {
        let challenge: [UInt8] = [0xF8] + (1...31).map { UInt8($0) }
        let userHandle: [UInt8] = [0xFA, 1, 2, 3]
        var authenticator = VirtualAuthenticator()
        if let flags { authenticator.flags = flags }
        var credential = authenticator.register(rpId: "example.org", origin: "https://example.org", challenge: [1], userHandle: userHandle)
            .credential
        let assertion = authenticator.assert(&credential, origin: "https://example.org", challenge: challenge)
        let id = Base64.urlEncode(assertion.credentialId)
        let response: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key",
            "response": [
                "clientDataJSON": Base64.urlEncode(assertion.clientDataJSON),
                "authenticatorData": Base64.urlEncode(assertion.authenticatorData),
                "signature": Base64.urlEncode(assertion.signature), "userHandle": Base64.urlEncode(assertion.userHandle),
            ],
        ]
        return (Base64.urlEncode(challenge), Base64.urlEncode(userHandle), Base64.urlEncode(credential.publicKeyCOSE), response)
    }

    /// Issue #29, item 5: `--backup-eligible` passes the stored BE flag; a change either way is reported, not refused.
    @Test func aBackupEligibilityChangeIsReportedNotRefused() async throws {
        let common = ["webauthn", "verify-authentication", "--rp-id", "example.org", "--origin", "https://example.org"]
        for (flags, stored, changed) in [
            (AuthenticatorData.Flags([.userPresent, .userVerified, .backupEligible, .backupState]), "false", true),
            (AuthenticatorData.Flags([.userPresent, .userVerified, .backupEligible, .backupState]), "true", false),
            (AuthenticatorData.Flags([.userPresent, .userVerified]), "true", true),
            (AuthenticatorData.Flags([.userPresent, .userVerified]), "false", false),
        ] {
            let made = Self.assertion(flags: flags)
            let (status, output) = try await WebAuthnCommandTests.run(
                common + ["--challenge", made.challenge, "--public-key", made.publicKey, "--backup-eligible", stored],
                input: made.response
            )
            #expect(status == 0, "\(output)")
            #expect(output["backupEligibilityChanged"] as? Bool == changed, "stored \(stored), \(output)")
            #expect(output["backupEligible"] as? Bool == flags.contains(.backupEligible))
        }
        // Without the option there is nothing to compare with; BS without BE stays an error.
        let plain = Self.assertion()
        let (status, output) = try await WebAuthnCommandTests.run(
            common + ["--challenge", plain.challenge, "--public-key", plain.publicKey], input: plain.response)
        #expect(status == 0 && output["backupEligibilityChanged"] as? Bool == false)
        let contradictory = Self.assertion(flags: [.userPresent, .userVerified, .backupState])
        let (failed, error) = try await WebAuthnCommandTests.run(
            common + ["--challenge", contradictory.challenge, "--public-key", contradictory.publicKey, "--backup-eligible", "true"],
            input: contradictory.response
        )
        #expect(failed == 1)
        #expect((error["error"] as? [String: Any])?["code"] as? String == "invalid_backup_flags")
    }

    @Test func optionValuesMayBeginWithADash() async throws {
        let made = Self.assertion()
        #expect(made.challenge.hasPrefix("-") && made.userHandle.hasPrefix("-"))
        let common = ["webauthn", "verify-authentication", "--rp-id", "example.org", "--origin", "https://example.org"]
        // Separated values.
        let (separated, output) = try await WebAuthnCommandTests.run(
            common + ["--challenge", made.challenge, "--public-key", made.publicKey, "--user-handle", made.userHandle],
            input: made.response
        )
        #expect(separated == 0, "\(output)")
        #expect(output["newSignCount"] as? Int == 1)
        // Joined with "=".
        let (joined, _) = try await WebAuthnCommandTests.run(
            common + ["--challenge=\(made.challenge)", "--public-key=\(made.publicKey)", "--user-handle=\(made.userHandle)"],
            input: made.response
        )
        #expect(joined == 0)
        // A wrong challenge that also begins with "-" is read as a value and fails verification, not parsing.
        let (wrong, error) = try await WebAuthnCommandTests.run(
            common + ["--challenge", "-" + String(repeating: "A", count: made.challenge.count - 1), "--public-key", made.publicKey],
            input: made.response
        )
        #expect(wrong == 1)
        #expect((error["error"] as? [String: Any])?["code"] as? String == "challenge_mismatch")
    }

    static func registrationInput() throws -> ([String: Any], String) {
        let vector = try WebAuthnCommandTests.vector("registrations", "PackedES256WithMDS")
        let id = try #require(vector["credentialId"] as? String)
        let response: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key",
            "response": ["clientDataJSON": vector["clientDataJSON"]!, "attestationObject": vector["attestationObject"]!],
        ]
        return (response, try #require(vector["challenge"] as? String))
    }

    @Test func aCertificateOutsideItsValidityFailsWithTheStepCode() async throws {
        let (response, challenge) = try Self.registrationInput()
        let caFile = try WebAuthnCommandTests.caFile()
        defer { TemporaryFiles.remove(caFile) }
        let (status, output) = try await WebAuthnCommandTests.run(
            [
                "webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org", "--challenge", challenge,
                "--trust-anchor", caFile, "--at", "2020-01-01T00:00:00Z",  // before the vector's certificates (2024-3024)
            ],
            input: response
        )
        #expect(status == 1)
        let error = try #require(output["error"] as? [String: Any])
        #expect(error["code"] as? String == "untrusted_attestation")
        #expect((error["message"] as? String)?.contains("not valid at") == true)
    }

    @Test func aChainThatReachesNoAnchorFailsWithTheStepCode() async throws {
        let (response, challenge) = try Self.registrationInput()
        // A root of our own: the vector's chain does not lead to it.
        let otherRoot = try TestAppAttestDevice(appId: "A.b").root
        let path = TemporaryFiles.path("other-root", suffix: ".pem")
        defer { TemporaryFiles.remove(path) }
        try otherRoot.serializeAsPEM().pemString.write(toFile: path, atomically: true, encoding: .utf8)
        let (status, output) = try await WebAuthnCommandTests.run(
            [
                "webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org", "--challenge", challenge,
                "--trust-anchor", path, "--at", "2025-06-01T00:00:00Z",
            ],
            input: response
        )
        #expect(status == 1)
        #expect((output["error"] as? [String: Any])?["code"] as? String == "untrusted_attestation")
        // Without anchors the attestation is reported, untrusted, as before.
        let (plain, reported) = try await WebAuthnCommandTests.run(
            [
                "webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org", "--challenge", challenge,
                "--at", "2025-06-01T00:00:00Z",
            ],
            input: response
        )
        #expect(plain == 0)
        #expect(reported["attestationTrusted"] as? Bool == false)
    }

    /// `--metadata`: a BLOB's model roots are trust anchors, its status reports are checked, and a BLOB that does not
    /// chain to `--metadata-root` is refused.
    @Test func verifyRegistrationWithMetadata() async throws {
        let (response, challenge) = try Self.registrationInput()
        let vector = try WebAuthnCommandTests.vector("registrations", "PackedES256WithMDS")
        let rootText = try #require(WebAuthnCommandTests.vectors["attestationCACertificateDER"] as? String)
        let vectorRoot = try Certificate(derEncoded: try #require(Base64.decode(rootText)))
        // The vector's AAGUID, as the verifier reports it.
        let clientDataText = try #require(vector["clientDataJSON"] as? String)
        let attestationText = try #require(vector["attestationObject"] as? String)
        var plainParty = RelyingParty(id: "example.org", name: "x", origins: ["https://example.org"])
        plainParty.algorithms = COSEAlgorithm.allCases
        let aaguid = try await plainParty.verifyRegistration(
            clientDataJSON: try #require(Base64.decode(clientDataText)),
            attestationObject: try #require(Base64.decode(attestationText)),
            challenge: try #require(Base64.decode(challenge)),
            at: Date(timeIntervalSince1970: 1_800_000_000)
        ).aaguidString
        let service = try TestMetadataService()
        let blobFile = TemporaryFiles.path("cli-mds", suffix: ".jwt")
        let rootFile = TemporaryFiles.path("cli-mds-root", suffix: ".pem")
        defer {
            TemporaryFiles.remove(blobFile)
            TemporaryFiles.remove(rootFile)
        }
        try service.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        func run(statuses: [(String, String)], root: String) async throws -> (Int32, [String: Any]) {
            let entry = try TestMetadataService.entry(aaguid: aaguid, description: "Vector Key", roots: [vectorRoot], statuses: statuses)
            try service.blob(number: 1, nextUpdate: "2027-02-01", entries: [entry]).write(toFile: blobFile, atomically: true, encoding: .utf8)
            return try await WebAuthnCommandTests.run(
                [
                    "webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org", "--challenge", challenge,
                    "--metadata", blobFile, "--metadata-root", root, "--at", "2027-01-15T00:00:00Z",
                ],
                input: response
            )
        }
        let (status, output) = try await run(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01")], root: rootFile)
        #expect(status == 0)
        #expect(output["attestationTrusted"] as? Bool == true)
        #expect(output["authenticator"] as? String == "Vector Key")
        #expect(output["authenticatorStatus"] as? String == "FIDO_CERTIFIED_L2")
        let (refused, error) = try await run(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01"), ("REVOKED", "2026-06-01")], root: rootFile)
        #expect(refused == 1)
        #expect((error["error"] as? [String: Any])?["code"] as? String == "authenticator_status_refused")
        // The FIDO Alliance's root (the default) does not vouch for the test service.
        let other = TemporaryFiles.path("cli-fido-root", suffix: ".pem")
        defer { TemporaryFiles.remove(other) }
        try MetadataBLOB.fidoRoots[0].serializeAsPEM().pemString.write(toFile: other, atomically: true, encoding: .utf8)
        let (untrusted, chainError) = try await run(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01")], root: other)
        #expect(untrusted == 1)
        #expect((chainError["error"] as? [String: Any])?["code"] as? String == "metadata_untrusted_chain")
    }

    /// Real authenticators' registrations from two reference libraries' suites (Fixtures/reference-registrations.json)
    /// give the reference result through the CLI: what is established, or the code of the failed step.
    @Test func referenceRegistrationsGiveTheReferenceResults() async throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TouchstoneWebAuthnTests/Fixtures/reference-registrations.json")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let fixtures = try #require(document["registrations"] as? [[String: Any]])
        #expect(fixtures.count >= 30)
        for fixture in fixtures {
            let name = fixture["name"] as? String ?? "?"
            var arguments = [
                "webauthn", "verify-registration", "--rp-id", try #require(fixture["rpId"] as? String),
                "--origin", try #require(fixture["origin"] as? String), "--challenge", try #require(fixture["challenge"] as? String),
            ]
            if let at = fixture["at"] as? String { arguments += ["--at", at] }
            let (status, output) = try await WebAuthnCommandTests.run(arguments, input: try #require(fixture["credential"] as? [String: Any]))
            let expect = try #require(fixture["expect"] as? [String: Any])
            if expect["accepted"] as? Bool == true {
                #expect(status == 0, "\(name): \(output)")
                for key in ["fmt", "attestationType", "aaguid", "algorithm"] {
                    #expect(output[key] as? String == expect[key] as? String, "\(name): \(key)")
                }
            } else {
                #expect(status == 1, "\(name)")
                #expect((output["error"] as? [String: Any])?["code"] as? String == expect["error"] as? String, "\(name)")
            }
        }
    }

    @Test func ed25519KeysOfSmallOrderFailVerification() async throws {
        // A "none" registration whose credential key is the identity point.
        let cose = CBOREncoder.encode(
            .map([.int(1): .int(1), .int(3): .int(-8), .int(-1): .int(6), .int(-2): .bytes(Ed25519Vectors.smallOrder[0].bytes)])
        )
        let challenge: [UInt8] = Array(repeating: 5, count: 32)
        let clientData = VirtualAuthenticator.clientData(type: "webauthn.create", challenge: challenge, origin: "https://example.org")
        var authData = Array(SHA256.hash(data: Array("example.org".utf8)))
        authData += [0x45, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0, 4, 1, 2, 3, 4] + cose
        let object = CBOREncoder.encode(.map([.text("fmt"): .text("none"), .text("attStmt"): .map([:]), .text("authData"): .bytes(authData)]))
        let id = Base64.urlEncode([1, 2, 3, 4])
        let (status, output) = try await WebAuthnCommandTests.run(
            [
                "webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org", "--challenge",
                Base64.urlEncode(challenge),
            ],
            input: [
                "id": id, "rawId": id, "type": "public-key",
                "response": ["clientDataJSON": Base64.urlEncode(clientData), "attestationObject": Base64.urlEncode(object)],
            ]
        )
        #expect(status == 1)
        #expect((output["error"] as? [String: Any])?["code"] as? String == "unsupported_key")
    }
}
