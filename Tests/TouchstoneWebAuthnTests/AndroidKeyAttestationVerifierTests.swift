import Crypto
import Foundation
import SwiftASN1
import Testing
import TouchstoneTesting
import X509

@testable import TouchstoneWebAuthn

/// Android Keystore key attestation for device-key enrolment: chains made in the test (one refusal per check), a
/// chain a real Pixel produced, and Google's roots as data.
struct AndroidKeyAttestationVerifierTests {
    static let time = Date(timeIntervalSince1970: 1_800_000_000)
    static let challenge: [UInt8] = Array(repeating: 7, count: 32)
    static let app = AndroidKeyAttestationVerifier.AllowedApp(
        packageName: "com.example.touchstone",
        signingCertificateSHA256: [TestAndroidKeystore.signingCertificateSHA256]
    )

    static func spki(_ key: P256.Signing.PublicKey) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(Certificate.PublicKey(key))
        return serializer.serializedBytes
    }

    static func expectFailure(_ code: AndroidKeyAttestationError.Code, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code.rawValue)")
        } catch let error as AndroidKeyAttestationError {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// Verifies a chain the test keystore makes for a new key described by `edit`.
    static func verify(
        statusList: AndroidAttestationStatusList = .empty,
        apps: [AndroidKeyAttestationVerifier.AllowedApp] = [app],
        at time: Date = time,
        _ edit: (inout TestAndroidKeystore.Key) -> Void = { _ in }
    ) async throws -> AndroidKeyAttestationVerifier.AttestedKey {
        let keystore = try TestAndroidKeystore()
        let key = P256.Signing.PrivateKey()
        var description = TestAndroidKeystore.Key(challenge: challenge)
        edit(&description)
        let chain = try keystore.chain(for: key.publicKey, key: description)
        let verifier = AndroidKeyAttestationVerifier(apps: apps, trustAnchors: [keystore.root], statusList: statusList)
        return try await verifier.verify(certificateChain: chain, publicKeySPKI: try spki(key.publicKey), at: time)
    }

    @Test func aBiometricTEEKeyOfAnAllowedAppIsAccepted() async throws {
        let attested = try await Self.verify()
        #expect(attested.challenge == Self.challenge)
        #expect(attested.securityLevel == .trustedEnvironment)
        #expect(attested.packageName == "com.example.touchstone")
        #expect(attested.attestationVersion == 200)
        let strongBox = try await Self.verify { $0.securityLevel = 2 }
        #expect(strongBox.securityLevel == .strongBox)
        // Biometric or device credential (BIOMETRIC_STRONG | DEVICE_CREDENTIAL) includes a biometric.
        _ = try await Self.verify { $0.userAuthType = 3 }
        // A description without signing certificates is judged by its package alone.
        _ = try await Self.verify { $0.signatureDigests = [] }
    }

    @Test func aSoftwareKeyIsRefused() async throws {
        await Self.expectFailure(.notHardwareBacked) { _ = try await Self.verify { $0.securityLevel = 0 } }
    }

    @Test func anImportedOrNonSigningKeyIsRefused() async throws {
        await Self.expectFailure(.notGeneratedForSigning) { _ = try await Self.verify { $0.origin = 2 } }
        await Self.expectFailure(.notGeneratedForSigning) { _ = try await Self.verify { $0.purposes = [0, 1] } }
    }

    @Test func aKeyForAllApplicationsIsRefused() async throws {
        await Self.expectFailure(.allApplications) { _ = try await Self.verify { $0.allApplications = true } }
    }

    @Test func aKeyUsableWithoutABiometricIsRefused() async throws {
        await Self.expectFailure(.noBiometricAuthentication) { _ = try await Self.verify { $0.noAuthRequired = true; $0.userAuthType = nil } }
        await Self.expectFailure(.noBiometricAuthentication) { _ = try await Self.verify { $0.userAuthType = nil } }
        // Device credential only (a PIN or pattern) is not a biometric.
        await Self.expectFailure(.noBiometricAuthentication) { _ = try await Self.verify { $0.userAuthType = 1 } }
    }

    @Test func anotherAppOrAnotherSigningCertificateIsRefused() async throws {
        await Self.expectFailure(.appNotAllowed) { _ = try await Self.verify { $0.packageNames = ["com.example.other"] } }
        await Self.expectFailure(.appNotAllowed) { _ = try await Self.verify { $0.signatureDigests = [Array(repeating: 1, count: 32)] } }
        await Self.expectFailure(.appNotAllowed) { _ = try await Self.verify(apps: []) }
        // An application id that is not an AttestationApplicationId.
        await Self.expectFailure(.malformed) { _ = try await Self.verify { $0.rawApplicationId = [0x04, 0x01, 0x00] } }
        // One package of a shared user id being allowed is enough, with its certificate.
        _ = try await Self.verify { $0.packageNames = ["com.example.helper", "com.example.touchstone"] }
    }

    @Test func theAttestedKeyMustBeTheEnrolledKey() async throws {
        let keystore = try TestAndroidKeystore()
        let key = P256.Signing.PrivateKey()
        let chain = try keystore.chain(for: key.publicKey, key: .init(challenge: Self.challenge))
        let verifier = AndroidKeyAttestationVerifier(apps: [Self.app], trustAnchors: [keystore.root])
        let other = try Self.spki(P256.Signing.PrivateKey().publicKey)
        await Self.expectFailure(.keyMismatch) { _ = try await verifier.verify(certificateChain: chain, publicKeySPKI: other, at: Self.time) }
    }

    @Test func aChainToAnotherRootOrOutsideItsValidityIsRefused() async throws {
        let keystore = try TestAndroidKeystore()
        let key = P256.Signing.PrivateKey()
        let spki = try Self.spki(key.publicKey)
        let chain = try keystore.chain(for: key.publicKey, key: .init(challenge: Self.challenge))
        // Google's roots do not know the test keystore.
        let google = AndroidKeyAttestationVerifier(apps: [Self.app])
        await Self.expectFailure(.untrustedCertificate) { _ = try await google.verify(certificateChain: chain, publicKeySPKI: spki, at: Self.time) }
        let verifier = AndroidKeyAttestationVerifier(apps: [Self.app], trustAnchors: [keystore.root])
        let expired = Self.time.addingTimeInterval(2 * 365 * 86_400)
        await Self.expectFailure(.untrustedCertificate) { _ = try await verifier.verify(certificateChain: chain, publicKeySPKI: spki, at: expired) }
        // A leaf that expired while its issuers are still valid.
        let shortLived = try keystore.chain(
            for: key.publicKey,
            key: .init(challenge: Self.challenge),
            validity: Self.time.addingTimeInterval(-7200)...Self.time.addingTimeInterval(-3600)
        )
        await Self.expectFailure(.untrustedCertificate) {
            _ = try await verifier.verify(certificateChain: shortLived, publicKeySPKI: spki, at: Self.time)
        }
        // The leaf alone does not reach the root.
        await Self.expectFailure(.untrustedCertificate) {
            _ = try await verifier.verify(certificateChain: [chain[0]], publicKeySPKI: spki, at: Self.time)
        }
    }

    @Test func aRevokedOrSuspendedCertificateIsRefused() async throws {
        let keystore = try TestAndroidKeystore()
        let key = P256.Signing.PrivateKey()
        let serial = Certificate.SerialNumber(bytes: [0x0A, 0xBC, 0xDE])
        let chain = try keystore.chain(for: key.publicKey, key: .init(challenge: Self.challenge), leafSerial: serial)
        let spki = try Self.spki(key.publicKey)
        for status in ["REVOKED", "SUSPENDED"] {
            // Serials are matched as the list spells them: lowercase hex, leading zeros dropped.
            let list = try AndroidAttestationStatusList(json: Array(#"{"entries": {"ABCDE": {"status": "\#(status)", "reason": "KEY_COMPROMISE"}}}"#.utf8))
            let verifier = AndroidKeyAttestationVerifier(apps: [Self.app], trustAnchors: [keystore.root], statusList: list)
            await Self.expectFailure(.revoked) { _ = try await verifier.verify(certificateChain: chain, publicKeySPKI: spki, at: Self.time) }
        }
        // The intermediate (a device's batch key) revoked refuses every key it attested.
        let intermediateSerial = AndroidAttestationStatusList.key(for: keystore.intermediate.serialNumber)
        let list = try AndroidAttestationStatusList(json: Array(#"{"entries": {"\#(intermediateSerial)": {"status": "REVOKED"}}}"#.utf8))
        let verifier = AndroidKeyAttestationVerifier(apps: [Self.app], trustAnchors: [keystore.root], statusList: list)
        await Self.expectFailure(.revoked) { _ = try await verifier.verify(certificateChain: chain, publicKeySPKI: spki, at: Self.time) }
    }

    @Test func malformedChainsAreRefused() async throws {
        let verifier = AndroidKeyAttestationVerifier(apps: [Self.app])
        let spki = try Self.spki(P256.Signing.PrivateKey().publicKey)
        await Self.expectFailure(.malformed) { _ = try await verifier.verify(certificateChain: [], publicKeySPKI: spki, at: Self.time) }
        await Self.expectFailure(.malformed) { _ = try await verifier.verify(certificateChain: [[0x30, 0x03, 0x02, 0x01]], publicKeySPKI: spki, at: Self.time) }
        let tooLong = Array(repeating: [UInt8](repeating: 0x30, count: 2), count: AndroidKeyAttestationVerifier.maximumChainLength + 1)
        await Self.expectFailure(.malformed) { _ = try await verifier.verify(certificateChain: tooLong, publicKeySPKI: spki, at: Self.time) }
        // A trusted certificate for the key, but without a key description.
        let keystore = try TestAndroidKeystore()
        let key = P256.Signing.PrivateKey()
        let plain = try TestAttestationCA()
        var serializer = DER.Serializer()
        try serializer.serialize(try plain.issue(for: key))
        let trusting = AndroidKeyAttestationVerifier(apps: [Self.app], trustAnchors: [plain.certificate, keystore.root])
        await Self.expectFailure(.malformed) {
            _ = try await trusting.verify(certificateChain: [serializer.serializedBytes], publicKeySPKI: try Self.spki(key.publicKey), at: Self.time)
        }
    }

    @Test func statusListsMustBeGooglesFormat() throws {
        let list = try AndroidAttestationStatusList(
            json: Array(#"{"entries": {"00c35f": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}, "1A": {"status": "SUSPENDED"}}}"#.utf8)
        )
        #expect(list.entry(for: .init(bytes: [0xC3, 0x5F])) == .init(status: "REVOKED", reason: "KEY_COMPROMISE"))
        #expect(list.entry(for: .init(bytes: [0x1A]))?.status == "SUSPENDED")
        #expect(list.entry(for: .init(bytes: [0x1B])) == nil)
        #expect(throws: (any Error).self) { try AndroidAttestationStatusList(json: Array(#"{"entries": {"xyz": {"status": "REVOKED"}}}"#.utf8)) }
        #expect(throws: (any Error).self) { try AndroidAttestationStatusList(json: Array(#"{"revoked": []}"#.utf8)) }
        #expect(throws: (any Error).self) { try AndroidAttestationStatusList(json: Array("not json".utf8)) }
    }

    // MARK: Google's roots and a real attestation

    @Test func googleRootsAreThePublishedOnes() {
        // SHA-256 of each root's DER, as listed beside the PEM on
        // https://developer.android.com/privacy-and-security/security-key-attestation#root_certificate.
        let published: Set<String> = [
            "1ef1a04b8ba58ab94589ac498c8982a783f24ea7307e0159a0c3a73b377d87cc",
            "ab6641178a36e179aa0c1cdddf9a16eb45fa20943e2b8cd7c7c05c26cf8b487a",
            "cedb1cb6dc896ae5ec797348bce9286753c2b38ee71ce0fbe34a9a1248800dfc",
            "6d9db4ce6c5c0b293166d08986e05774a8776ceb525d9e4329520de12ba4bcc0",
        ]
        let digests = Set(
            AndroidKeyAttestationVerifier.googleRoots.map { root in
                var serializer = DER.Serializer()
                try! serializer.serialize(root)
                return SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02x", $0) }.joined()
            }
        )
        #expect(digests == published)
    }

    /// A chain a Pixel produced (remote-provisioned: leaf, Droid CA3, Droid CA2, an intermediate, Google's 2019 RSA
    /// root), published by Google as `server/src/test/resources/normal_cert_chain.pem` of
    /// https://github.com/google/android-key-attestation (commit 8774085178f2c8dd59d30ae7fa29e7d43c94641a). Its key
    /// is a TEE P-256 signing key of `com.google.attestationexample`, challenge "challenge", made without user
    /// authentication; Droid CA3 was valid from 2023-02-18 to 2023-03-24. (Re-wrapped to 64-column PEM lines, bytes unchanged.)
    static let realChain: [[UInt8]] = {
        let url = Bundle.module.url(forResource: "google-android-key-attestation-chain", withExtension: "pem", subdirectory: "Fixtures")!
        let documents = try! PEMDocument.parseMultiple(pemString: String(contentsOf: url, encoding: .utf8))
        return documents.map(\.derBytes)
    }()
    static let realTime = ISO8601DateFormatter().date(from: "2023-03-01T00:00:00Z")!
    static let exampleApp = AndroidKeyAttestationVerifier.AllowedApp(
        packageName: "com.google.attestationexample",
        signingCertificateSHA256: [hex("68856d1d06f637d6255face5b224db43a9514ace538bb1548b844480fcd85c87")]
    )

    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    static var realLeafSPKI: [UInt8] {
        get throws {
            var serializer = DER.Serializer()
            try serializer.serialize(try Certificate(derEncoded: realChain[0]).publicKey)
            return serializer.serializedBytes
        }
    }

    @Test func aRealPixelChainVerifiesToGooglesRootsUpToItsMissingBiometric() async throws {
        #expect(Self.realChain.count == 5)
        let verifier = AndroidKeyAttestationVerifier(apps: [Self.exampleApp])
        // Every check before the last passes on real bytes (Google's roots, TEE, generated signing key, the app and
        // its signing certificate); the key was made without setUserAuthenticationRequired, so it is refused.
        await Self.expectFailure(.noBiometricAuthentication) {
            _ = try await verifier.verify(certificateChain: Self.realChain, publicKeySPKI: try Self.realLeafSPKI, at: Self.realTime)
        }
        let description = try KeyDescription(der: try Certificate(derEncoded: Self.realChain[0]).extensions[oid: KeyDescription.oid]!.value)
        #expect(description.attestationChallenge == Array("challenge".utf8))
        #expect(description.attestationSecurityLevel == 1)
        #expect(description.teeEnforced.noAuthRequired)
        #expect(description.teeEnforced.purposes == [2])
        // Without the root: the same chain still reaches Google's roots, which are shipped.
        await Self.expectFailure(.noBiometricAuthentication) {
            _ = try await verifier.verify(certificateChain: Array(Self.realChain.dropLast()), publicKeySPKI: try Self.realLeafSPKI, at: Self.realTime)
        }
    }

    @Test func aRealPixelChainIsRefusedForAnotherAppAfterExpiryAndOnceRevoked() async throws {
        let spki = try Self.realLeafSPKI
        let otherApp = AndroidKeyAttestationVerifier(apps: [Self.app])
        await Self.expectFailure(.appNotAllowed) { _ = try await otherApp.verify(certificateChain: Self.realChain, publicKeySPKI: spki, at: Self.realTime) }
        let verifier = AndroidKeyAttestationVerifier(apps: [Self.exampleApp])
        // Droid CA3 expired on 2023-03-24.
        let later = ISO8601DateFormatter().date(from: "2023-04-01T00:00:00Z")!
        await Self.expectFailure(.untrustedCertificate) { _ = try await verifier.verify(certificateChain: Self.realChain, publicKeySPKI: spki, at: later) }
        // The device's attestation key (serial d05facf4…) revoked.
        let list = try AndroidAttestationStatusList(
            json: Array(#"{"entries": {"d05facf443ed535548d994f6845e6d3c": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#.utf8)
        )
        let revoking = AndroidKeyAttestationVerifier(apps: [Self.exampleApp], statusList: list)
        await Self.expectFailure(.revoked) { _ = try await revoking.verify(certificateChain: Self.realChain, publicKeySPKI: spki, at: Self.realTime) }
    }
}
