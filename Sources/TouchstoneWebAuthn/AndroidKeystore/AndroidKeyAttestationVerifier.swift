import Crypto
public import Foundation
import SwiftASN1
import TouchstoneCrypto
public import X509

/// Why an Android Keystore key attestation was refused.
public struct AndroidKeyAttestationError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// No certificates, too many, a certificate that is not DER, or a leaf without a readable key description.
        case malformed = "malformed"
        /// The chain does not lead to a trusted root at the verification time (a certificate expired or not yet
        /// valid, a broken signature, an unknown root).
        case untrustedCertificate = "untrusted_certificate"
        /// A certificate of the chain is revoked or suspended in Google's attestation status list.
        case revoked = "revoked"
        /// The attested key is not the key being enrolled.
        case keyMismatch = "key_mismatch"
        /// The key lives in software, not in a trusted execution environment or StrongBox.
        case notHardwareBacked = "not_hardware_backed"
        /// The key was imported rather than generated in the keystore, or may not sign.
        case notGeneratedForSigning = "not_generated_for_signing"
        /// The key can be used by every app on the device.
        case allApplications = "all_applications"
        /// The key was made by an app that is not on the allow-list (package name or signing certificate).
        case appNotAllowed = "app_not_allowed"
        /// The key may be used without a biometric (no user authentication, or authentication that excludes
        /// biometrics).
        case noBiometricAuthentication = "no_biometric_authentication"
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(self.code.rawValue): \(self.reason)" }
}

/// Verifies the Keystore attestation of a device key an Android app enrols: the certificate chain Android's
/// `KeyStore.getCertificateChain(alias)` returns for a key generated with `setAttestationChallenge`.
///
/// What it establishes: the key was generated inside the device's trusted execution environment or StrongBox, by an
/// allowed app, for signing only after a biometric; the chain leads to Google's hardware attestation roots and no
/// certificate of it is revoked. What it returns, and leaves to the caller: the attestation challenge (the server must
/// have issued it for this enrolment).
///
/// The checks follow Android's "Verify hardware-backed key pairs with key attestation"
/// (https://developer.android.com/privacy-and-security/security-key-attestation); the hardware-enforced list is the
/// only one that counts for what the key may do, as the software-enforced one is only what Android's framework says.
public struct AndroidKeyAttestationVerifier: Sendable {
    /// An app whose keys are accepted: its package name and the SHA-256 of its signing certificate(s).
    public struct AllowedApp: Sendable, Hashable {
        public var packageName: String
        public var signingCertificateSHA256: [[UInt8]]

        public init(packageName: String, signingCertificateSHA256: [[UInt8]]) {
            self.packageName = packageName
            self.signingCertificateSHA256 = signingCertificateSHA256
        }
    }

    /// Where the key lives.
    public enum SecurityLevel: String, Sendable, Hashable, CaseIterable {
        /// A trusted execution environment (attestation security level 1).
        case trustedEnvironment = "tee"
        /// A separate secure element (attestation security level 2).
        case strongBox = "strongbox"
    }

    /// What a verified attestation establishes.
    public struct AttestedKey: Sendable, Hashable {
        /// The attestation challenge the app set with `setAttestationChallenge`: the caller checks it is a nonce it
        /// issued for this enrolment.
        public var challenge: [UInt8]
        public var securityLevel: SecurityLevel
        /// The allowed app the key belongs to.
        public var packageName: String
        /// The attestation (KeyMint or Keymaster) version.
        public var attestationVersion: Int
    }

    /// The most certificates a chain may have (Android's are three to five long).
    public static let maximumChainLength = 10

    public var apps: [AllowedApp]
    public var trustAnchors: [Certificate]
    public var statusList: AndroidAttestationStatusList

    public init(
        apps: [AllowedApp],
        trustAnchors: [Certificate] = AndroidKeyAttestationVerifier.googleRoots,
        statusList: AndroidAttestationStatusList = .empty
    ) {
        self.apps = apps
        self.trustAnchors = trustAnchors
        self.statusList = statusList
    }

    /// Verifies `certificateChain` (DER, leaf first) for the key whose SubjectPublicKeyInfo DER is
    /// `publicKeySPKI`, with certificate validity evaluated at `time`.
    ///
    /// - Parameter requireBiometric: the key must need a biometric for each use (a device key); false for a key that
    ///   signs without the user (a DPoP proof key), which must still be hardware-backed, generated for signing and the app's.
    public func verify(certificateChain: [[UInt8]], publicKeySPKI: [UInt8], at time: Date, requireBiometric: Bool = true)
        async throws(AndroidKeyAttestationError) -> AttestedKey
    {
        guard !certificateChain.isEmpty, certificateChain.count <= Self.maximumChainLength else {
            throw AndroidKeyAttestationError(.malformed, "the chain must hold 1 to \(Self.maximumChainLength) certificates")
        }
        let certificates: [Certificate]
        do {
            certificates = try certificateChain.map { try Certificate(derEncoded: $0) }
        } catch {
            throw AndroidKeyAttestationError(.malformed, "a certificate of the chain is not DER X.509")
        }
        // The chain leads to a trusted root, every certificate valid at `time`.
        guard await RelyingParty.chainIsTrusted(certificates, anchors: self.trustAnchors, at: time) else {
            throw AndroidKeyAttestationError(
                .untrustedCertificate,
                "the chain does not lead to a trusted attestation root with every certificate valid now"
            )
        }
        // No certificate is revoked or suspended (the root's serial is listed too when Google revokes it).
        for certificate in certificates {
            if let entry = self.statusList.entry(for: certificate.serialNumber) {
                throw AndroidKeyAttestationError(
                    .revoked,
                    "certificate \(AndroidAttestationStatusList.key(for: certificate.serialNumber)) is \(entry.status.lowercased())"
                        + (entry.reason.map { " (\($0.lowercased()))" } ?? "")
                )
            }
        }
        let leaf = certificates[0]
        // The attested key is the enrolled key.
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(leaf.publicKey)) != nil, ConstantTime.equal(serializer.serializedBytes, publicKeySPKI) else {
            throw AndroidKeyAttestationError(.keyMismatch, "the attestation certificate's key is not the enrolled key")
        }
        guard let extensionValue = leaf.extensions[oid: KeyDescription.oid],
            let description = try? KeyDescription(der: extensionValue.value)
        else {
            throw AndroidKeyAttestationError(.malformed, "the attestation certificate has no readable key description")
        }
        // In secure hardware, as both the attestation and the keystore say.
        let securityLevel: SecurityLevel
        switch (description.attestationSecurityLevel, description.keyMintSecurityLevel) {
        case (1, 1...2): securityLevel = .trustedEnvironment
        case (2, 1...2): securityLevel = .strongBox
        default:
            throw AndroidKeyAttestationError(
                .notHardwareBacked,
                "the attestation security level is \(description.attestationSecurityLevel) and the keystore's "
                    + "\(description.keyMintSecurityLevel); 1 (TEE) or 2 (StrongBox) is required"
            )
        }
        let hardware = description.teeEnforced
        guard hardware.origin == KeyDescription.originGenerated, hardware.purposes.contains(KeyDescription.purposeSign) else {
            throw AndroidKeyAttestationError(
                .notGeneratedForSigning,
                "the hardware-enforced list must say the key was generated in the keystore, for signing"
            )
        }
        guard !hardware.allApplications, !description.softwareEnforced.allApplications else {
            throw AndroidKeyAttestationError(.allApplications, "the key is usable by all applications")
        }
        let packageName = try self.allowedApp(description)
        // Usable only after a biometric: user authentication required, by a biometric (alone or among others).
        guard !requireBiometric || (!hardware.noAuthRequired && !description.softwareEnforced.noAuthRequired
            && (hardware.userAuthType ?? 0) & KeyDescription.biometricAuthenticator != 0)
        else {
            throw AndroidKeyAttestationError(
                .noBiometricAuthentication,
                "the hardware-enforced list must require user authentication that includes a biometric "
                    + "(setUserAuthenticationRequired with BIOMETRIC_STRONG)"
            )
        }
        return AttestedKey(
            challenge: description.attestationChallenge,
            securityLevel: securityLevel,
            packageName: packageName,
            attestationVersion: description.attestationVersion
        )
    }

    /// The allowed app named by the key description: its package on the allow-list and, when the description lists
    /// signing certificates, one of them the app's.
    private func allowedApp(_ description: KeyDescription) throws(AndroidKeyAttestationError) -> String {
        // Android puts the application id in the software-enforced list (the keystore daemon, not the TEE, knows
        // the app); some devices repeat it in the hardware list.
        guard let der = description.softwareEnforced.attestationApplicationId ?? description.teeEnforced.attestationApplicationId
        else {
            throw AndroidKeyAttestationError(.appNotAllowed, "the key description names no application")
        }
        let application: AttestationApplicationId
        do {
            application = try AttestationApplicationId(der: der)
        } catch {
            throw AndroidKeyAttestationError(.malformed, "the attestation application id is malformed")
        }
        for app in self.apps where application.packageNames.contains(app.packageName) {
            if application.signatureDigests.isEmpty
                || application.signatureDigests.contains(where: { app.signingCertificateSHA256.contains($0) })
            {
                return app.packageName
            }
            throw AndroidKeyAttestationError(
                .appNotAllowed,
                "\(app.packageName) is signed with a certificate that is not the configured one"
            )
        }
        let names = application.packageNames.joined(separator: ", ")
        throw AndroidKeyAttestationError(.appNotAllowed, "the key belongs to \(names.isEmpty ? "no package" : names), not an allowed app")
    }
}

/// Google's attestation certificate status list (https://android.googleapis.com/attestation/status): the serial
/// numbers of revoked and suspended attestation certificates.
///
/// Its format: `{"entries": {"<serial in lowercase hex>": {"status": "REVOKED" | "SUSPENDED", "reason": "..."}}}`.
public struct AndroidAttestationStatusList: Sendable, Hashable {
    public struct Entry: Sendable, Hashable, Decodable {
        public var status: String
        public var reason: String?
    }

    /// Entries by serial: lowercase hex without leading zeros.
    public private(set) var entries: [String: Entry]

    public static let empty = AndroidAttestationStatusList(entries: [:])

    public init(entries: [String: Entry]) {
        self.entries = Dictionary(entries.map { (Self.normalized($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Parses the list as Google serves it.
    ///
    /// - Throws: `DecodingError` when the text is not such a list.
    public init(json: [UInt8]) throws {
        struct Document: Decodable { var entries: [String: Entry] }
        let document = try JSONDecoder().decode(Document.self, from: Data(json))
        for key in document.entries.keys where key.isEmpty || !key.allSatisfy(\.isHexDigit) {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "'\(key)' is not a hexadecimal serial number"))
        }
        self.init(entries: document.entries)
    }

    /// The entry for a certificate's serial number, if it is listed.
    public func entry(for serial: Certificate.SerialNumber) -> Entry? {
        self.entries[Self.key(for: serial)]
    }

    /// A serial number as the list spells it.
    static func key(for serial: Certificate.SerialNumber) -> String {
        normalized(Hex.encode(serial.bytes))
    }

    private static func normalized(_ hex: String) -> String {
        let trimmed = hex.lowercased().drop(while: { $0 == "0" })
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
}
