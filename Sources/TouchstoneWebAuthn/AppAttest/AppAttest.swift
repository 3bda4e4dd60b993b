import Crypto
import TouchstoneCrypto
public import Foundation
import SwiftASN1
public import X509

/// Why an App Attest attestation or assertion was refused.
public struct AppAttestError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Not CBOR, not `apple-appattest`, fields missing or of the wrong type.
        case malformed = "malformed"
        /// The certificate chain does not lead to a trusted root at the verification time.
        case untrustedCertificate = "untrusted_certificate"
        /// The nonce in the credential certificate is not SHA-256(authenticatorData ‖ clientDataHash).
        case nonceMismatch = "nonce_mismatch"
        /// SHA-256 of the certified public key, or the credential id, is not the key id.
        case keyIdMismatch = "key_id_mismatch"
        /// The RP ID hash is not SHA-256 of an allowed App ID (team id + bundle id).
        case appIdMismatch = "app_id_mismatch"
        /// The AAGUID is not the configured environment's (`appattest` or `appattestdevelop`).
        case environmentMismatch = "environment_mismatch"
        /// An attestation whose counter is not 0.
        case counterNotZero = "counter_not_zero"
        /// An assertion whose signature does not verify with the attested key.
        case invalidSignature = "invalid_signature"
        /// An assertion whose counter does not exceed the last one seen (a replay or a cloned key).
        case counterNotIncreased = "counter_not_increased"
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(self.code.rawValue): \(self.reason)" }
}

/// Verifies Apple App Attest attestations and assertions (DeviceCheck), the server's half of "this request comes from
/// my genuine app on a genuine Apple device".
///
/// The steps are those of Apple's "Validating apps that connect to your server"
/// (https://developer.apple.com/documentation/devicecheck/validating-apps-that-connect-to-your-server).
public struct AppAttestVerifier: Sendable {
    /// Which App Attest environment keys must come from.
    public enum Environment: String, Sendable, Hashable, CaseIterable {
        /// Apps from the App Store, TestFlight or enterprise distribution: AAGUID `appattest` followed by seven zeros.
        case production
        /// Development builds: AAGUID `appattestdevelop`.
        case development

        public var aaguid: [UInt8] {
            switch self {
            case .production: return Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
            case .development: return Array("appattestdevelop".utf8)
            }
        }
    }

    /// App IDs (`TEAMID.bundle.identifier`) whose keys are accepted.
    public var appIds: [String]
    public var environment: Environment
    /// Roots the credential certificate must chain to (Apple's App Attestation Root CA by default).
    public var trustAnchors: [Certificate]

    public init(appIds: [String], environment: Environment, trustAnchors: [Certificate] = AppAttestVerifier.appleRoots) {
        self.appIds = appIds
        self.environment = environment
        self.trustAnchors = trustAnchors
    }

    /// Apple App Attestation Root CA (P-384, valid 2020-03-18 to 2045-03-15), as published at
    /// https://www.apple.com/certificateauthority/Apple_App_Attestation_Root_CA.pem.
    public static let appleRoots: [Certificate] = {
        let pem = """
            -----BEGIN CERTIFICATE-----
            MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
            JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
            QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
            Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
            biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
            bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
            NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
            Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
            MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
            CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
            53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
            oyFraWVIyd/dganmrduC1bmTBGwD
            -----END CERTIFICATE-----
            """
        // A constant that must parse: a failure is a build defect, caught by the tests.
        return RelyingParty.trustAnchors(pem: pem) ?? []
    }()

    /// What an attestation establishes: a key pair in the Secure Enclave of a genuine device, made by the app.
    public struct AttestedKey: Sendable, Hashable {
        /// The key id: SHA-256 of the public key (what `DCAppAttestService.generateKey` returned, decoded).
        public var keyId: [UInt8]
        /// The P-256 public key, X9.63 uncompressed (65 bytes): verifies the key's assertions.
        public var publicKey: [UInt8]
        /// The App ID the key belongs to.
        public var appId: String
        public var environment: Environment
        /// Apple's receipt (PKCS#7), for fraud-metric requests to Apple; not verified here.
        public var receipt: [UInt8]
    }

    /// Verifies an attestation object from `DCAppAttestService.attestKey(_:clientDataHash:)`.
    ///
    /// - Parameters:
    ///   - keyId: The key id the app sent, decoded from base64.
    ///   - clientDataHash: What the app passed to `attestKey`: normally SHA-256 of the server's one-time challenge.
    ///   - time: When to evaluate the certificates' validity.
    public func verifyAttestation(_ attestationObject: [UInt8], keyId: [UInt8], clientDataHash: [UInt8], at time: Date)
        async throws(AppAttestError) -> AttestedKey
    {
        let (authData, certificates, receipt) = try Self.parseAttestation(attestationObject)
        // Step 1: the certificate chain leads to Apple's root.
        guard await RelyingParty.chainIsTrusted(certificates, anchors: self.trustAnchors, at: time) else {
            throw AppAttestError(.untrustedCertificate, "the certificate chain does not lead to a trusted App Attest root")
        }
        let leaf = certificates[0]
        // Steps 2–4: nonce = SHA-256(authData ‖ clientDataHash), equal to the credential certificate's extension.
        let nonce = Array(SHA256.hash(data: authData.rawValue + clientDataHash))
        guard let extensionValue = leaf.extensions[oid: AttestationOID.appleNonce],
            let certificateNonce = try? AppleAttestation.nonce(from: extensionValue.value)
        else {
            throw AppAttestError(.malformed, "the credential certificate has no readable nonce extension")
        }
        guard ConstantTime.equal(certificateNonce, nonce) else {
            throw AppAttestError(.nonceMismatch, "the certificate's nonce is not SHA-256(authenticatorData ‖ clientDataHash)")
        }
        // Step 5: the key id is SHA-256 of the certified public key.
        guard let certifiedKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AppAttestError(.malformed, "the credential certificate's key is not P-256")
        }
        let publicKey = Array(certifiedKey.x963Representation)
        guard Array(SHA256.hash(data: publicKey)) == keyId else {
            throw AppAttestError(.keyIdMismatch, "the key id is not SHA-256 of the certified public key")
        }
        // Step 6: the RP ID hash is SHA-256 of the App ID.
        guard let appId = self.appIds.first(where: { Array(SHA256.hash(data: Array($0.utf8))) == authData.rpIdHash }) else {
            throw AppAttestError(.appIdMismatch, "the RP ID hash is not that of an allowed App ID")
        }
        // Step 7: a new key has signed nothing yet.
        guard authData.signCount == 0 else {
            throw AppAttestError(.counterNotZero, "the attestation's counter is \(authData.signCount), not 0")
        }
        guard let credential = authData.credential else {
            throw AppAttestError(.malformed, "authenticator data has no attested credential data")
        }
        // Step 8: the AAGUID names the environment.
        guard credential.aaguid == self.environment.aaguid else {
            throw AppAttestError(.environmentMismatch, "the key does not come from the \(self.environment.rawValue) environment")
        }
        // Step 9: the credential id is the key id.
        guard credential.credentialId == keyId else {
            throw AppAttestError(.keyIdMismatch, "the credential id is not the key id")
        }
        return AttestedKey(keyId: keyId, publicKey: publicKey, appId: appId, environment: self.environment, receipt: receipt)
    }

    /// Verifies an assertion from `DCAppAttestService.generateAssertion(_:clientDataHash:)` over `clientData`, the
    /// exact bytes of the request the app signed (the app passes SHA-256 of them as `clientDataHash`).
    ///
    /// - Parameters:
    ///   - publicKey: The attested key (``AttestedKey/publicKey``).
    ///   - appId: The App ID the key was attested for.
    ///   - previousCounter: The counter of the key's last accepted assertion (0 after attestation).
    /// - Returns: The assertion's counter, to store for the next one.
    public func verifyAssertion(
        _ assertion: [UInt8],
        clientData: [UInt8],
        publicKey: [UInt8],
        appId: String,
        previousCounter: UInt32
    ) throws(AppAttestError) -> UInt32 {
        let item: CBOR
        do {
            item = try CBORDecoder().decode(assertion)
        } catch {
            throw AppAttestError(.malformed, "the assertion is not CBOR: \(error.reason)")
        }
        guard let map = item.mapValue, let signature = map[text: "signature"]?.bytesValue,
            let authenticatorData = map[text: "authenticatorData"]?.bytesValue
        else {
            throw AppAttestError(.malformed, "the assertion needs signature and authenticatorData byte strings")
        }
        let authData = try AppAttestAuthenticatorData(authenticatorData)
        // Steps 1–3: the signature over nonce = SHA-256(authenticatorData ‖ SHA-256(clientData)).
        let nonce = Array(SHA256.hash(data: authenticatorData + Array(SHA256.hash(data: clientData))))
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey),
            let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature),
            key.isValidSignature(ecdsa, for: nonce)
        else {
            throw AppAttestError(.invalidSignature, "the assertion signature does not verify with the attested key")
        }
        // Step 4: the RP ID hash is the App ID's.
        guard authData.rpIdHash == Array(SHA256.hash(data: Array(appId.utf8))) else {
            throw AppAttestError(.appIdMismatch, "the RP ID hash is not SHA-256 of \(appId)")
        }
        // Step 5: the counter grows with every assertion.
        guard authData.signCount > previousCounter else {
            throw AppAttestError(.counterNotIncreased, "counter \(authData.signCount) does not exceed \(previousCounter)")
        }
        return authData.signCount
    }

    // MARK: Parsing

    private static func parseAttestation(_ bytes: [UInt8]) throws(AppAttestError)
        -> (AppAttestAuthenticatorData, [Certificate], [UInt8])
    {
        let item: CBOR
        do {
            item = try CBORDecoder().decode(bytes)
        } catch {
            throw AppAttestError(.malformed, "the attestation is not CBOR: \(error.reason)")
        }
        guard let map = item.mapValue, map[text: "fmt"]?.textValue == "apple-appattest" else {
            throw AppAttestError(.malformed, "the attestation's format is not apple-appattest")
        }
        guard let statement = map[text: "attStmt"]?.mapValue, let authDataBytes = map[text: "authData"]?.bytesValue,
            let chain = statement[text: "x5c"]?.arrayValue, !chain.isEmpty,
            let receipt = statement[text: "receipt"]?.bytesValue
        else {
            throw AppAttestError(.malformed, "the attestation needs authData and attStmt with x5c and receipt")
        }
        var certificates: [Certificate] = []
        for element in chain {
            guard let der = element.bytesValue, let certificate = try? Certificate(derEncoded: der) else {
                throw AppAttestError(.malformed, "x5c holds something that is not a DER certificate")
            }
            certificates.append(certificate)
        }
        return (try AppAttestAuthenticatorData(authDataBytes), certificates, receipt)
    }
}

/// App Attest's authenticator data: WebAuthn's layout, read only as far as App Attest uses it.
///
/// Current devices append a CBOR map (bundle version, validation category) after the credential public key without
/// setting the extension-data flag, which a WebAuthn parser rightly refuses; App Attest takes the key from the
/// certificate, so what follows the credential id is not interpreted.
struct AppAttestAuthenticatorData {
    struct Credential {
        var aaguid: [UInt8]
        var credentialId: [UInt8]
    }

    let rawValue: [UInt8]
    let rpIdHash: [UInt8]
    let signCount: UInt32
    let credential: Credential?

    init(_ bytes: [UInt8]) throws(AppAttestError) {
        guard bytes.count >= 37 else { throw AppAttestError(.malformed, "authenticator data is shorter than 37 bytes") }
        self.rawValue = bytes
        self.rpIdHash = Array(bytes[0..<32])
        self.signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard bytes[32] & 0x40 != 0 else {
            self.credential = nil
            return
        }
        guard bytes.count >= 55 else { throw AppAttestError(.malformed, "attested credential data is truncated") }
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { throw AppAttestError(.malformed, "the credential id runs past the end") }
        self.credential = Credential(aaguid: Array(bytes[37..<53]), credentialId: Array(bytes[55..<(55 + length)]))
    }
}
