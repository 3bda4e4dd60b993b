import Crypto
public import Foundation
import TouchstoneCrypto
import TouchstoneWebAuthn

/// What an approval leaves behind, enough to check it without the server: the payload, the signature, the key and its
/// algorithm, and for a passkey the authenticator data and client data it signed. `GET
/// /v1/confirmations/{id}/evidence` answers `{"evidence": ...}`; `touchstone confirmation verify` checks it.
public struct ConfirmationEvidence: Codable, Sendable, Hashable {
    public var confirmationId: String
    /// The canonical payload text, exactly as signed.
    public var payload: String
    /// base64url of the SHA-256 of the payload's UTF-8 bytes.
    public var payloadSha256: String
    /// `biometric` (a device key signed the payload) or `passkey` (a WebAuthn assertion over its SHA-256).
    public var method: String
    /// `ES256`, `EdDSA` or `RS256` for a device key; the COSE algorithm name for a passkey.
    public var algorithm: String
    /// base64url: the device key as SubjectPublicKeyInfo DER, or the passkey's COSE key.
    public var publicKey: String
    /// base64url, as the device or authenticator made it.
    public var signature: String
    public var authenticatorData: String?
    public var clientDataJSON: String?
    public var registrationId: String?
    public var passkeyId: String?
    public var approvedAt: String

    public init(
        confirmationId: String,
        payload: String,
        method: String,
        algorithm: String,
        publicKey: String,
        signature: String,
        authenticatorData: String? = nil,
        clientDataJSON: String? = nil,
        registrationId: String? = nil,
        passkeyId: String? = nil,
        approvedAt: String
    ) {
        self.confirmationId = confirmationId
        self.payload = payload
        self.payloadSha256 = Self.sha256(payload)
        self.method = method
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.signature = signature
        self.authenticatorData = authenticatorData
        self.clientDataJSON = clientDataJSON
        self.registrationId = registrationId
        self.passkeyId = passkeyId
        self.approvedAt = approvedAt
    }

    /// base64url(SHA-256(UTF-8(text))).
    public static func sha256(_ text: String) -> String { Base64.urlEncode(Array(SHA256.hash(data: Array(text.utf8)))) }

    /// What a successful check established.
    public struct Verified: Sendable, Hashable {
        public var payload: ConfirmationPayload
        public var method: String
        /// For a passkey: whether the authenticator verified its user (UV); a device key's prompt is not visible in
        /// its signature.
        public var userVerified: Bool?
    }

    /// Why evidence does not hold.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public let reason: String
        public var description: String { self.reason }
    }

    /// Checks the signature over the payload, and that the payload is canonical and names this confirmation.
    public func verify() throws(Failure) -> Verified {
        let payload: ConfirmationPayload
        do {
            payload = try ConfirmationPayload(text: self.payload)
        } catch {
            throw Failure(reason: "the payload \(error.reason)")
        }
        guard payload.confirmationId == self.confirmationId else {
            throw Failure(reason: "the payload is for confirmation \(payload.confirmationId), not \(self.confirmationId)")
        }
        guard Self.sha256(self.payload) == self.payloadSha256 else { throw Failure(reason: "payloadSha256 is not the payload's hash") }
        guard let publicKey = Base64.decode(self.publicKey), let signature = Base64.decode(self.signature) else {
            throw Failure(reason: "publicKey and signature must be base64url")
        }
        switch self.method {
        case "biometric":
            guard let algorithm = SignatureAlgorithm(rawValue: self.algorithm) else { throw Failure(reason: "unknown algorithm \(self.algorithm)") }
            let key: DevicePublicKey
            do {
                key = try DevicePublicKey(bytes: publicKey, algorithm: algorithm)
            } catch {
                throw Failure(reason: "the public key: \(error)")
            }
            guard key.isValidSignature(signature, for: payload.bytes) else {
                throw Failure(reason: "the signature does not verify over the payload with the device key")
            }
            return Verified(payload: payload, method: self.method, userVerified: nil)
        case "passkey":
            return try self.verifyPasskey(payload: payload, publicKey: publicKey, signature: signature)
        default:
            throw Failure(reason: "unknown method \(self.method)")
        }
    }

    private func verifyPasskey(payload: ConfirmationPayload, publicKey: [UInt8], signature: [UInt8]) throws(Failure) -> Verified {
        guard let authenticatorDataBytes = self.authenticatorData.flatMap({ Base64.decode($0) }),
            let clientDataBytes = self.clientDataJSON.flatMap({ Base64.decode($0) })
        else {
            throw Failure(reason: "passkey evidence needs authenticatorData and clientDataJSON (base64url)")
        }
        let key: COSEKey
        let authenticatorData: AuthenticatorData
        let clientData: CollectedClientData
        do {
            key = try COSEKey(bytes: publicKey)
            authenticatorData = try AuthenticatorData(bytes: authenticatorDataBytes)
            clientData = try CollectedClientData(bytes: clientDataBytes)
        } catch {
            throw Failure(reason: "passkey evidence: \(error)")
        }
        guard clientData.type == "webauthn.get" else { throw Failure(reason: "clientDataJSON is not of an assertion (webauthn.get)") }
        guard clientData.challenge == Array(SHA256.hash(data: payload.bytes)) else {
            throw Failure(reason: "the assertion's challenge is not the SHA-256 of the payload")
        }
        guard authenticatorData.rpIdHash == Array(SHA256.hash(data: Array(payload.rpId.utf8))) else {
            throw Failure(reason: "the authenticator data is for another relying party than \(payload.rpId)")
        }
        guard authenticatorData.flags.contains(.userPresent) else { throw Failure(reason: "the authenticator did not see its user (UP)") }
        let signed = authenticatorDataBytes + Array(SHA256.hash(data: clientDataBytes))
        guard key.isValidSignature(signature, for: signed) else {
            throw Failure(reason: "the assertion signature does not verify with the passkey's key")
        }
        return Verified(payload: payload, method: self.method, userVerified: authenticatorData.flags.contains(.userVerified))
    }
}
