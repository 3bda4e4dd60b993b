import SwiftASN1

/// Android's key attestation record (the `KeyDescription` extension of a Keystore attestation certificate), as far as
/// WebAuthn's `android-key` format and Touchstone's device-key enrolment check it.
///
/// The schema is Android's "Key attestation" extension
/// (https://source.android.com/docs/security/features/keystore/attestation#schema): a SEQUENCE of
/// attestationVersion, attestationSecurityLevel, keyMintVersion, keyMintSecurityLevel, attestationChallenge, uniqueId,
/// softwareEnforced and hardwareEnforced (`teeEnforced`); later versions only add fields after these.
struct KeyDescription {
    /// 1.3.6.1.4.1.11129.2.1.17.
    static let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    // Tag numbers of the AuthorizationList fields read here (keymaster `Tag` values without their type bits).
    static let purposeTag: UInt = 1
    static let noAuthRequiredTag: UInt = 503
    static let userAuthTypeTag: UInt = 504
    static let allApplicationsTag: UInt = 600
    static let originTag: UInt = 702
    static let attestationApplicationIdTag: UInt = 709

    /// `KeyOrigin.GENERATED`: made inside the keystore, never outside it.
    static let originGenerated = 0
    /// `KeyPurpose.SIGN`.
    static let purposeSign = 2
    /// The `HardwareAuthenticatorType` bit for biometrics (`FINGERPRINT`, which Android uses for every class 3
    /// biometric).
    static let biometricAuthenticator: Int64 = 2

    /// `SecurityLevel`: 0 software, 1 trusted environment, 2 StrongBox.
    static let securityLevelSoftware = 0

    struct AuthorizationList {
        var purposes: [Int] = []
        var origin: Int?
        var allApplications = false
        var noAuthRequired = false
        /// The authenticator types that unlock the key (a bit set; nil when the key needs none).
        var userAuthType: Int64?
        /// The DER of the AttestationApplicationId (inside its OCTET STRING).
        var attestationApplicationId: [UInt8]?
    }

    var attestationVersion: Int
    var attestationSecurityLevel: Int
    var keyMintSecurityLevel: Int
    var attestationChallenge: [UInt8]
    var softwareEnforced: AuthorizationList
    var teeEnforced: AuthorizationList

    init(der: ArraySlice<UInt8>) throws {
        let root = try DER.parse(der)
        guard case .constructed(let fields) = root.content else { throw ASN1Error.invalidASN1Object(reason: "not a sequence") }
        let nodes = Array(fields)
        guard nodes.count >= 8 else { throw ASN1Error.invalidASN1Object(reason: "KeyDescription is too short") }
        self.attestationVersion = try Int(derEncoded: nodes[0])
        self.attestationSecurityLevel = try Int(derEncoded: nodes[1], withIdentifier: .enumerated)
        self.keyMintSecurityLevel = try Int(derEncoded: nodes[3], withIdentifier: .enumerated)
        self.attestationChallenge = Array(try ASN1OctetString(derEncoded: nodes[4]).bytes)
        self.softwareEnforced = try Self.authorizationList(nodes[6])
        self.teeEnforced = try Self.authorizationList(nodes[7])
    }

    private static func authorizationList(_ node: ASN1Node) throws -> AuthorizationList {
        guard case .constructed(let entries) = node.content else { throw ASN1Error.invalidASN1Object(reason: "not a list") }
        var list = AuthorizationList()
        for entry in entries where entry.identifier.tagClass == .contextSpecific {
            guard case .constructed(let wrapped) = entry.content, let inner = Array(wrapped).first else { continue }
            switch entry.identifier.tagNumber {
            case Self.purposeTag:
                guard case .constructed(let values) = inner.content else { continue }
                list.purposes = try values.map { try Int(derEncoded: $0) }
            case Self.originTag:
                list.origin = try Int(derEncoded: inner)
            case Self.allApplicationsTag:
                list.allApplications = true
            case Self.noAuthRequiredTag:
                list.noAuthRequired = true
            case Self.userAuthTypeTag:
                list.userAuthType = try Int64(derEncoded: inner)
            case Self.attestationApplicationIdTag:
                list.attestationApplicationId = Array(try ASN1OctetString(derEncoded: inner).bytes)
            default:
                continue
            }
        }
        return list
    }
}

/// The app a Keystore key was made for, as Android's keystore saw it: `AttestationApplicationId ::= SEQUENCE {
/// package_infos SET OF AttestationPackageInfo, signature_digests SET OF OCTET STRING }`, each package info being
/// `SEQUENCE { package_name OCTET STRING, version INTEGER }` (several packages when they share a Linux user id), each
/// digest the SHA-256 of one of the app's signing certificates.
struct AttestationApplicationId {
    var packageNames: [String]
    var signatureDigests: [[UInt8]]

    init(der: [UInt8]) throws {
        let root = try DER.parse(der)
        guard case .constructed(let fields) = root.content else { throw ASN1Error.invalidASN1Object(reason: "not a sequence") }
        let nodes = Array(fields)
        guard nodes.count >= 2, case .constructed(let packages) = nodes[0].content, case .constructed(let digests) = nodes[1].content
        else {
            throw ASN1Error.invalidASN1Object(reason: "AttestationApplicationId needs package infos and signature digests")
        }
        self.packageNames = try packages.map { info in
            guard case .constructed(let parts) = info.content, let name = Array(parts).first else {
                throw ASN1Error.invalidASN1Object(reason: "a package info is not a sequence")
            }
            guard let text = String(validating: try ASN1OctetString(derEncoded: name).bytes, as: UTF8.self) else {
                throw ASN1Error.invalidASN1Object(reason: "a package name is not UTF-8")
            }
            return text
        }
        self.signatureDigests = try digests.map { Array(try ASN1OctetString(derEncoded: $0).bytes) }
    }
}
