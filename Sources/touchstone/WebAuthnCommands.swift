import ArgumentParser
import Foundation
import TouchstoneCrypto
import TouchstoneWebAuthn
import X509

/// Debugging tools: verify a browser's WebAuthn JSON offline and learn which step fails.
struct WebAuthn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webauthn",
        abstract: "Verify WebAuthn responses offline (paste a browser's credential.toJSON() on stdin).",
        subcommands: [VerifyRegistration.self, VerifyAuthentication.self]
    )

    struct RelyingPartyOptions: ParsableArguments {
        @Option(name: .customLong("rp-id"), help: "The relying party id, e.g. example.com.")
        var rpId: String

        @Option(name: .customLong("origin"), help: "An allowed origin (repeat for several).")
        var origins: [String]

        // Base64url values may begin with "-": take the next argument whatever it looks like.
        @Option(name: .long, parsing: .unconditional, help: "The challenge the server issued, base64url.")
        var challenge: String

        @Flag(name: .customLong("require-user-verification"), help: "Fail unless the UV flag is set.")
        var requireUserVerification = false

        @Flag(name: .customLong("allow-cross-origin"), help: "Accept ceremonies in cross-origin iframes.")
        var allowCrossOrigin = false

        func relyingParty() -> RelyingParty {
            var rp = RelyingParty(id: self.rpId, name: self.rpId, origins: self.origins)
            rp.userVerification = self.requireUserVerification ? .required : .preferred
            rp.allowCrossOrigin = self.allowCrossOrigin
            return rp
        }

        func challengeBytes() throws -> [UInt8] {
            guard let bytes = Base64.decode(self.challenge), !bytes.isEmpty else {
                throw ValidationError("--challenge must be base64url")
            }
            return bytes
        }
    }

    struct VerifyRegistration: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-registration",
            abstract: "Verify a RegistrationResponseJSON read from stdin."
        )

        @OptionGroup var relyingParty: RelyingPartyOptions

        @Option(name: .long, help: "Check certificates at this time (RFC 3339) instead of now.")
        var at: String?

        @Option(name: .customLong("trust-anchor"), help: "A PEM file of attestation roots (repeatable).")
        var trustAnchors: [String] = []

        @Option(name: .long, help: "A FIDO Metadata Service BLOB: its models' roots become trust anchors, its status reports are checked.")
        var metadata: String?

        @Option(name: .customLong("metadata-root"), help: "A PEM file of roots the BLOB must chain to (default: the FIDO Alliance's).")
        var metadataRoots: [String] = []

        struct Output: Encodable {
            var fmt: String
            var attestationType: String
            var attestationTrusted: Bool
            var credentialId: String
            var publicKey: String
            var algorithm: String
            var signCount: UInt32
            var aaguid: String
            var userVerified: Bool
            var backupEligible: Bool
            var backupState: Bool
            /// With `--metadata`: the model's name and latest status, when the BLOB knows it.
            var authenticator: String?
            var authenticatorStatus: String?
        }

        func run() async throws {
            var rp = self.relyingParty.relyingParty()
            rp.algorithms = COSEAlgorithm.allCases
            rp.trustAnchors = try self.trustAnchors.flatMap(loadCertificates)
            let time = try self.at.map(parseTime) ?? Date()
            let challenge = try self.relyingParty.challengeBytes()
            if let path = self.metadata {
                guard let jws = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("cannot read \(path)") }
                let roots = self.metadataRoots.isEmpty ? MetadataBLOB.fidoRoots : try self.metadataRoots.flatMap(loadCertificates)
                do {
                    rp.metadata = try await MetadataBLOB.verify(jws: jws, roots: roots, at: time)
                } catch {
                    try printJSON(["error": ["code": "metadata_\(error.code.rawValue)", "message": error.reason]])
                    throw ExitCode.failure
                }
            }
            try await reportingFailure {
                let response = try readJSON(RegistrationResponseJSON.self)
                let (rawId, clientDataJSON, attestationObject) = try response.decoded()
                let result = try await rp.verifyRegistration(
                    clientDataJSON: clientDataJSON,
                    attestationObject: attestationObject,
                    challenge: challenge,
                    at: time
                )
                guard rawId == result.credentialId else {
                    throw WebAuthnError.malformed("rawId is not the attested credential id")
                }
                try printJSON(
                    Output(
                        fmt: result.format,
                        attestationType: result.attestationType.rawValue,
                        attestationTrusted: result.attestationTrusted,
                        credentialId: Base64.urlEncode(result.credentialId),
                        publicKey: Base64.urlEncode(result.publicKey),
                        algorithm: result.algorithm.name,
                        signCount: result.signCount,
                        aaguid: result.aaguidString,
                        userVerified: result.userVerified,
                        backupEligible: result.backupEligible,
                        backupState: result.backupState,
                        authenticator: result.metadata?.description,
                        authenticatorStatus: result.metadata?.status?.rawValue
                    )
                )
            }
        }
    }

    struct VerifyAuthentication: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-authentication",
            abstract: "Verify an AuthenticationResponseJSON read from stdin against a stored public key."
        )

        @OptionGroup var relyingParty: RelyingPartyOptions

        @Option(name: .customLong("public-key"), parsing: .unconditional, help: "The credential's COSE public key, base64url (from verify-registration).")
        var publicKey: String

        @Option(name: .customLong("sign-count"), help: "The stored signature counter.")
        var signCount: UInt32 = 0

        @Option(name: .customLong("user-handle"), parsing: .unconditional, help: "The account's user handle, base64url, to check userHandle against.")
        var userHandle: String?

        @Option(
            name: .customLong("backup-eligible"),
            help: "The stored BE flag (true or false, from verify-registration's backupEligible); a change is reported, not refused."
        )
        var backupEligible: Bool?

        struct Output: Encodable {
            var newSignCount: UInt32
            var userVerified: Bool
            var backupEligible: Bool
            var backupState: Bool
            /// BE differs from `--backup-eligible` (false without it).
            var backupEligibilityChanged: Bool
            var cloneWarning: Bool
        }

        func run() async throws {
            let rp = self.relyingParty.relyingParty()
            let challenge = try self.relyingParty.challengeBytes()
            guard let publicKey = Base64.decode(self.publicKey) else { throw ValidationError("--public-key must be base64url") }
            try await reportingFailure {
                let response = try readJSON(AuthenticationResponseJSON.self)
                let (credentialId, clientDataJSON, authenticatorData, signature, userHandle) = try response.decoded()
                // Without --backup-eligible, the assertion's own BE stands for the stored flag (no change to report).
                let flags = try AuthenticatorData(bytes: authenticatorData).flags
                let expectedHandle = try self.userHandle.map { text -> [UInt8] in
                    guard let bytes = Base64.decode(text) else { throw ValidationError("--user-handle must be base64url") }
                    return bytes
                }
                let result = try rp.verifyAuthentication(
                    credentialId: credentialId,
                    clientDataJSON: clientDataJSON,
                    authenticatorData: authenticatorData,
                    signature: signature,
                    userHandle: expectedHandle == nil ? nil : userHandle,
                    challenge: challenge,
                    allowCredentials: [credentialId],
                    credential: StoredCredential(
                        id: credentialId,
                        publicKey: publicKey,
                        signCount: self.signCount,
                        backupEligible: self.backupEligible ?? flags.contains(.backupEligible),
                        userHandle: expectedHandle ?? []
                    )
                )
                try printJSON(
                    Output(
                        newSignCount: result.newSignCount,
                        userVerified: result.userVerified,
                        backupEligible: result.backupEligible,
                        backupState: result.backupState,
                        backupEligibilityChanged: result.backupEligibilityChanged,
                        cloneWarning: result.cloneWarning
                    )
                )
            }
        }
    }
}

// MARK: - Helpers

private func readJSON<T: Decodable>(_ type: T.Type) throws -> T {
    let data = FileHandle.standardInput.readDataToEndOfFile()
    do {
        return try JSONDecoder().decode(T.self, from: data)
    } catch {
        throw WebAuthnError.malformed("stdin is not a \(T.self): \(error)")
    }
}

private func parseTime(_ text: String) throws -> Date {
    if let date = try? Date(text, strategy: .iso8601) { return date }
    if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
    throw ValidationError("--at must be an RFC 3339 time, e.g. 2026-01-31T12:00:00Z")
}

private func loadCertificates(_ path: String) throws -> [Certificate] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8), let certificates = RelyingParty.trustAnchors(pem: text) else {
        throw ValidationError("\(path) is not a PEM file of certificates")
    }
    return certificates
}

/// Runs `body`; a WebAuthn failure prints `{"error":{"code","message"}}` and exits 1.
private func reportingFailure(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as WebAuthnError {
        try printJSON(["error": ["code": error.code.rawValue, "message": error.reason]])
        throw ExitCode.failure
    }
}
