/// Why a WebAuthn response was rejected. ``code`` is stable (for APIs and tests); ``reason`` explains.
public struct WebAuthnError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Structurally invalid input (CBOR, authenticator data, JSON, base64).
        case malformed = "malformed"
        case wrongType = "wrong_type"
        case challengeMismatch = "challenge_mismatch"
        case originNotAllowed = "origin_not_allowed"
        case crossOriginNotAllowed = "cross_origin_not_allowed"
        case topOriginNotAllowed = "top_origin_not_allowed"
        case rpIdMismatch = "rp_id_mismatch"
        case userNotPresent = "user_not_present"
        case userNotVerified = "user_not_verified"
        case invalidBackupFlags = "invalid_backup_flags"
        case algorithmNotAllowed = "algorithm_not_allowed"
        case unsupportedKey = "unsupported_key"
        case unsupportedFormat = "unsupported_attestation_format"
        case invalidAttestation = "invalid_attestation"
        case untrustedAttestation = "untrusted_attestation"
        case attestationTypeNotAllowed = "attestation_type_not_allowed"
        /// The authenticator's metadata carries a status report the relying party refuses (a known compromise).
        case authenticatorStatusRefused = "authenticator_status_refused"
        /// Only FIDO-certified authenticators with trusted attestation are accepted, and this one is not.
        case uncertifiedAuthenticator = "uncertified_authenticator"
        case invalidSignature = "invalid_signature"
        case credentialNotAllowed = "credential_not_allowed"
        case userHandleMismatch = "user_handle_mismatch"
        case signCountNotIncreased = "sign_count_not_increased"
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static func malformed(_ reason: String) -> Self { .init(.malformed, reason) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }
    public var description: String { "\(self.code.rawValue): \(self.reason)" }
}
