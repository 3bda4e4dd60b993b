import Crypto
import Foundation
import Testing
import TouchstoneCrypto

@testable import TouchstoneWebAuthn

/// One test per verification step: each builds a response that only that step rejects, so removing the step makes
/// its test fail.
struct VerificationStepTests {
    static let rpId = "example.org"
    static let origin = "https://example.org"
    static let challenge: [UInt8] = Array(0..<32)
    static let user: [UInt8] = [9, 9, 9]

    static func rp(_ customize: (inout RelyingParty) -> Void = { _ in }) -> RelyingParty {
        var rp = RelyingParty(id: rpId, name: "Example", origins: [origin, "android:apk-key-hash:abc"])
        customize(&rp)
        return rp
    }

    static func register(
        _ authenticator: VirtualAuthenticator = VirtualAuthenticator(),
        rp: RelyingParty = rp(),
        origin: String = origin,
        algorithm: COSEAlgorithm = .es256,
        clientData: [String: any Sendable] = [:]
    ) async throws -> VerifiedRegistration {
        let registration = authenticator.register(
            rpId: rpId,
            origin: origin,
            challenge: challenge,
            userHandle: user,
            algorithm: algorithm,
            clientData: clientData
        )
        return try await rp.verifyRegistration(
            clientDataJSON: registration.clientDataJSON,
            attestationObject: registration.attestationObject,
            challenge: challenge
        )
    }

    // MARK: Registration (§7.1)

    @Test(arguments: [COSEAlgorithm.es256, .eddsa])
    func aValidRegistrationPasses(algorithm: COSEAlgorithm) async throws {
        var authenticator = VirtualAuthenticator()
        authenticator.attestationFormat = .packedSelf
        let result = try await Self.register(authenticator, algorithm: algorithm)
        #expect(result.format == "packed")
        #expect(result.attestationType == .self)
        #expect(result.algorithm == algorithm)
        #expect(result.userVerified && result.backupEligible && result.backupState)
        #expect(try COSEKey(bytes: result.publicKey).algorithm == algorithm)
    }

    @Test func step7TypeMustBeCreate() async throws {
        await #expect(throws: WebAuthnError(.wrongType, "")) { try await Self.register(clientData: ["type": "webauthn.get"]) }
    }

    @Test func step8ChallengeMustMatch() async throws {
        await #expect(throws: WebAuthnError(.challengeMismatch, "")) {
            try await Self.register(clientData: ["challenge": Base64.urlEncode([UInt8](repeating: 7, count: 32))])
        }
    }

    @Test func step9OriginMustBeAllowed() async throws {
        await #expect(throws: WebAuthnError(.originNotAllowed, "")) { try await Self.register(origin: "https://evil.example") }
        // An Android app origin in the list is accepted.
        _ = try await Self.register(origin: "android:apk-key-hash:abc")
    }

    @Test func step10CrossOriginAndTopOriginFollowPolicy() async throws {
        await #expect(throws: WebAuthnError(.crossOriginNotAllowed, "")) { try await Self.register(clientData: ["crossOrigin": true]) }
        await #expect(throws: WebAuthnError(.topOriginNotAllowed, "")) {
            try await Self.register(clientData: ["topOrigin": "https://embedder.example"])
        }
        let permissive = Self.rp {
            $0.allowCrossOrigin = true
            $0.allowedTopOrigins = ["https://partner.example/"]
        }
        _ = try await Self.register(rp: permissive, clientData: ["crossOrigin": true, "topOrigin": "https://partner.example"])
        await #expect(throws: WebAuthnError(.topOriginNotAllowed, "")) {
            try await Self.register(rp: permissive, clientData: ["crossOrigin": true, "topOrigin": "https://other.example"])
        }
    }

    @Test func clientDataMustBeJSONWithTheRightTypes() async throws {
        let rp = Self.rp()
        let registration = VirtualAuthenticator().register(rpId: Self.rpId, origin: Self.origin, challenge: Self.challenge, userHandle: Self.user)
        for bad in ["not json", "[]", "{\"type\":\"webauthn.create\"}", "{\"type\":1,\"challenge\":\"AA\",\"origin\":\"x\"}"] {
            await #expect(throws: WebAuthnError(.malformed, "")) {
                try await rp.verifyRegistration(
                    clientDataJSON: Array(bad.utf8),
                    attestationObject: registration.attestationObject,
                    challenge: Self.challenge
                )
            }
        }
    }

    @Test func step13RpIdHashMustMatch() async throws {
        await #expect(throws: WebAuthnError(.rpIdMismatch, "")) {
            try await Self.register(rp: Self.rp { $0.id = "other.example" })
        }
    }

    @Test func step14UserMustBePresent() async throws {
        var authenticator = VirtualAuthenticator()
        authenticator.flags.remove(.userPresent)
        await #expect(throws: WebAuthnError(.userNotPresent, "")) { try await Self.register(authenticator) }
    }

    @Test func step15UserVerificationWhenRequired() async throws {
        var authenticator = VirtualAuthenticator()
        authenticator.flags.remove(.userVerified)
        _ = try await Self.register(authenticator)  // preferred: accepted, reported
        await #expect(throws: WebAuthnError(.userNotVerified, "")) {
            try await Self.register(authenticator, rp: Self.rp { $0.userVerification = .required })
        }
    }

    @Test func step16BackupStateWithoutEligibilityIsRejected() async throws {
        var authenticator = VirtualAuthenticator()
        authenticator.flags = [.userPresent, .userVerified, .backupState]
        await #expect(throws: WebAuthnError(.invalidBackupFlags, "")) { try await Self.register(authenticator) }
    }

    @Test func step19AlgorithmMustBeAllowed() async throws {
        await #expect(throws: WebAuthnError(.algorithmNotAllowed, "")) {
            try await Self.register(rp: Self.rp { $0.algorithms = [.eddsa] })
        }
    }

    @Test func step21UnknownFormatsAreRejected() async throws {
        let registration = VirtualAuthenticator().register(rpId: Self.rpId, origin: Self.origin, challenge: Self.challenge, userHandle: Self.user)
        var object = try #require(try CBORDecoder().decode(registration.attestationObject).mapValue)
        object.set(.text("fmt"), .text("made-up"))
        await #expect(throws: WebAuthnError(.unsupportedFormat, "")) {
            try await Self.rp().verifyRegistration(
                clientDataJSON: registration.clientDataJSON,
                attestationObject: CBOREncoder.encode(.map(object)),
                challenge: Self.challenge
            )
        }
    }

    @Test func step22PackedSelfSignatureMustVerify() async throws {
        var authenticator = VirtualAuthenticator()
        authenticator.attestationFormat = .packedSelf
        let registration = authenticator.register(rpId: Self.rpId, origin: Self.origin, challenge: Self.challenge, userHandle: Self.user)
        var object = try #require(try CBORDecoder().decode(registration.attestationObject).mapValue)
        var statement = try #require(object[text: "attStmt"]?.mapValue)
        var signature = try #require(statement[text: "sig"]?.bytesValue)
        signature[signature.count - 2] ^= 1
        statement.set(.text("sig"), .bytes(signature))
        object.set(.text("attStmt"), .map(statement))
        await #expect(throws: WebAuthnError(.invalidSignature, "")) {
            try await Self.rp().verifyRegistration(
                clientDataJSON: registration.clientDataJSON,
                attestationObject: CBOREncoder.encode(.map(object)),
                challenge: Self.challenge
            )
        }
    }

    @Test func step22NoneStatementMustBeEmpty() async throws {
        let registration = VirtualAuthenticator().register(rpId: Self.rpId, origin: Self.origin, challenge: Self.challenge, userHandle: Self.user)
        var object = try #require(try CBORDecoder().decode(registration.attestationObject).mapValue)
        object.set(.text("attStmt"), .map([.text("sig"): .bytes([1])]))
        await #expect(throws: WebAuthnError(.invalidAttestation, "")) {
            try await Self.rp().verifyRegistration(
                clientDataJSON: registration.clientDataJSON,
                attestationObject: CBOREncoder.encode(.map(object)),
                challenge: Self.challenge
            )
        }
    }

    @Test func step24MinimumAttestationIsEnforced() async throws {
        await #expect(throws: WebAuthnError(.attestationTypeNotAllowed, "")) {
            try await Self.register(rp: Self.rp { $0.minimumAttestation = .self })
        }
        var authenticator = VirtualAuthenticator()
        authenticator.attestationFormat = .packedSelf
        _ = try await Self.register(authenticator, rp: Self.rp { $0.minimumAttestation = .self })
        await #expect(throws: WebAuthnError(.attestationTypeNotAllowed, "")) {
            try await Self.register(authenticator, rp: Self.rp { $0.minimumAttestation = .basic })
        }
    }

    // MARK: Authentication (§7.2)

    struct Enrolled {
        var rp: RelyingParty
        var authenticator: VirtualAuthenticator
        var credential: VirtualAuthenticator.Credential
        var stored: StoredCredential
    }

    static func enrolled(_ customize: (inout VirtualAuthenticator) -> Void = { _ in }) async throws -> Enrolled {
        var authenticator = VirtualAuthenticator()
        customize(&authenticator)
        let rp = Self.rp()
        let registration = authenticator.register(rpId: rpId, origin: origin, challenge: challenge, userHandle: user)
        let verified = try await rp.verifyRegistration(
            clientDataJSON: registration.clientDataJSON,
            attestationObject: registration.attestationObject,
            challenge: challenge
        )
        let stored = StoredCredential(
            id: verified.credentialId,
            publicKey: verified.publicKey,
            signCount: verified.signCount,
            backupEligible: verified.backupEligible,
            userHandle: user
        )
        return Enrolled(rp: rp, authenticator: authenticator, credential: registration.credential, stored: stored)
    }

    static func verify(
        _ assertion: VirtualAuthenticator.Assertion,
        _ enrolled: Enrolled,
        rp: RelyingParty? = nil,
        userHandle: [UInt8]?? = nil,
        allow: [[UInt8]] = []
    ) throws -> VerifiedAuthentication {
        try (rp ?? enrolled.rp).verifyAuthentication(
            credentialId: assertion.credentialId,
            clientDataJSON: assertion.clientDataJSON,
            authenticatorData: assertion.authenticatorData,
            signature: assertion.signature,
            userHandle: userHandle ?? assertion.userHandle,
            challenge: challenge,
            allowCredentials: allow,
            credential: enrolled.stored
        )
    }

    @Test func aValidAssertionPassesAndAdvancesTheCounter() async throws {
        var enrolled = try await Self.enrolled()
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        let result = try Self.verify(assertion, enrolled, allow: [enrolled.stored.id])
        #expect(result.newSignCount == 1)
        #expect(!result.cloneWarning)
        #expect(result.userVerified && result.backupState)
    }

    @Test func step5CredentialMustBeAllowed() async throws {
        var enrolled = try await Self.enrolled()
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        #expect(throws: WebAuthnError(.credentialNotAllowed, "")) { try Self.verify(assertion, enrolled, allow: [[1, 2, 3]]) }
    }

    @Test func step6UserHandleMustBelongToTheOwner() async throws {
        var enrolled = try await Self.enrolled()
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        #expect(throws: WebAuthnError(.userHandleMismatch, "")) { try Self.verify(assertion, enrolled, userHandle: .some([1])) }
        // A discoverable login (no allow list) needs the user handle.
        #expect(throws: WebAuthnError(.userHandleMismatch, "")) { try Self.verify(assertion, enrolled, userHandle: .some(nil)) }
        _ = try Self.verify(assertion, enrolled, userHandle: .some(nil), allow: [enrolled.stored.id])
    }

    @Test func step11TypeMustBeGet() async throws {
        var enrolled = try await Self.enrolled()
        let assertion = enrolled.authenticator.assert(
            &enrolled.credential, origin: Self.origin, challenge: Self.challenge, clientData: ["type": "webauthn.create"])
        #expect(throws: WebAuthnError(.wrongType, "")) { try Self.verify(assertion, enrolled) }
    }

    @Test func step12ChallengeMustMatch() async throws {
        var enrolled = try await Self.enrolled()
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: [1, 2, 3])
        #expect(throws: WebAuthnError(.challengeMismatch, "")) { try Self.verify(assertion, enrolled) }
    }

    @Test func step13OriginMustBeAllowed() async throws {
        var enrolled = try await Self.enrolled()
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: "https://evil.example", challenge: Self.challenge)
        #expect(throws: WebAuthnError(.originNotAllowed, "")) { try Self.verify(assertion, enrolled) }
    }

    @Test func step15RpIdHashMustMatch() async throws {
        var enrolled = try await Self.enrolled()
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        var rp = enrolled.rp
        rp.id = "other.example"
        #expect(throws: WebAuthnError(.rpIdMismatch, "")) { try Self.verify(assertion, enrolled, rp: rp) }
    }

    @Test func step16And17PresenceAndVerification() async throws {
        var enrolled = try await Self.enrolled()
        enrolled.authenticator.flags.remove(.userPresent)
        let noPresence = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        #expect(throws: WebAuthnError(.userNotPresent, "")) { try Self.verify(noPresence, enrolled) }
        enrolled.authenticator.flags = [.userPresent, .backupEligible]
        let noVerification = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        var strict = enrolled.rp
        strict.userVerification = .required
        #expect(throws: WebAuthnError(.userNotVerified, "")) { try Self.verify(noVerification, enrolled, rp: strict) }
        #expect(try !Self.verify(noVerification, enrolled).userVerified)
    }

    @Test func step18BackupFlagsAreChecked() async throws {
        var enrolled = try await Self.enrolled()
        enrolled.authenticator.flags = [.userPresent, .userVerified, .backupState]
        let invalid = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        #expect(throws: WebAuthnError(.invalidBackupFlags, "")) { try Self.verify(invalid, enrolled) }
        // A change of BE alone is reported, in both directions, never refused (issue #29, item 5).
        #expect(enrolled.stored.backupEligible)
        enrolled.authenticator.flags = [.userPresent, .userVerified, .backupEligible]
        let unchanged = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        #expect(try !Self.verify(unchanged, enrolled).backupEligibilityChanged)
        enrolled.authenticator.flags = [.userPresent, .userVerified]
        let lost = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        let lostResult = try Self.verify(lost, enrolled)
        #expect(lostResult.backupEligibilityChanged)
        #expect(!lostResult.backupEligible)
        enrolled.stored.backupEligible = false
        #expect(try !Self.verify(lost, enrolled).backupEligibilityChanged)
        enrolled.authenticator.flags = [.userPresent, .userVerified, .backupEligible, .backupState]
        let gained = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        let gainedResult = try Self.verify(gained, enrolled)
        #expect(gainedResult.backupEligibilityChanged)
        #expect(gainedResult.backupEligible && gainedResult.backupState)
    }

    @Test func step21SignatureMustVerify() async throws {
        var enrolled = try await Self.enrolled()
        var assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        assertion.authenticatorData[36] ^= 1  // the counter, covered by the signature
        #expect(throws: WebAuthnError(.invalidSignature, "")) { try Self.verify(assertion, enrolled) }
    }

    @Test func step22CounterRegressionIsReportedAndCanBeRejected() async throws {
        var enrolled = try await Self.enrolled()
        enrolled.stored.signCount = 10
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        let result = try Self.verify(assertion, enrolled)
        #expect(result.cloneWarning)
        #expect(result.newSignCount == 10)
        var strict = enrolled.rp
        strict.rejectCounterRegression = true
        #expect(throws: WebAuthnError(.signCountNotIncreased, "")) { try Self.verify(assertion, enrolled, rp: strict) }
    }

    @Test func zeroCountersAreNotAWarning() async throws {
        var enrolled = try await Self.enrolled { $0.counterStep = 0 }
        let assertion = enrolled.authenticator.assert(&enrolled.credential, origin: Self.origin, challenge: Self.challenge)
        #expect(try !Self.verify(assertion, enrolled).cloneWarning)
    }
}
