public import Foundation

/// Whether the device can verify its user with biometrics right now.
public enum BiometryAvailability: Sendable, Hashable {
    case available(BiometryKind)
    case notAvailable
    case notEnrolled
    case passcodeNotSet
    case lockedOut
}

/// The kind of biometric sensor, for the UI's wording.
public enum BiometryKind: String, Sendable, Hashable, Codable {
    case faceID
    case touchID
    case opticID
    /// A software verifier (Linux, tests, the CLI).
    case simulated
}

/// Proof that the user was just verified, handed from the ``UserVerifier`` to the ``DeviceKeyStore``.
public struct UserVerification: Sendable {
    public var verifiedAt: Date
    /// A platform object the key store may reuse (an `LAContext` on Apple platforms), so the user is asked once.
    public var context: (any Sendable)?

    public init(verifiedAt: Date, context: (any Sendable)? = nil) {
        self.verifiedAt = verifiedAt
        self.context = context
    }
}

/// The biometric prompt.
public protocol UserVerifier: Sendable {
    /// What the device can do now. Never prompts.
    func availability() async -> BiometryAvailability

    /// Shows the prompt with `reason`.
    ///
    /// - Throws: ``BiometricLoginError`` with `.userCancelled`, `.userFallback`, `.lockedOut`, `.notEnrolled`...
    func verifyUser(reason: String) async throws -> UserVerification
}
