/// What the Apple adapters' system errors mean to the SDK, kept here — platform neutral, tested on Linux — so the
/// adapters stay thin. The numbers are the documented raw values of `LAError.Code` and of Security framework
/// `OSStatus` codes.
public enum PlatformErrorMapping {
    /// `LAError.Code` raw values.
    public enum LAErrorCode: Int, Sendable, CaseIterable {
        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        case biometryNotAvailable = -6
        case biometryNotEnrolled = -7
        case biometryLockout = -8
        case appCancel = -9
        case invalidContext = -10
        case companionNotAvailable = -11
        case biometryNotPaired = -12
        case biometryDisconnected = -13
        case invalidDimensions = -14
        case notInteractive = -1004
    }

    /// The SDK error for a failed `LAContext.evaluatePolicy`.
    public static func error(forLAErrorCode rawValue: Int, message: String) -> BiometricLoginError {
        switch LAErrorCode(rawValue: rawValue) {
        case .userCancel?:
            return BiometricLoginError(.userCancelled, message)
        case .systemCancel?, .appCancel?:
            // The app went to the background or cancelled: nothing the user chose, nothing to report.
            return BiometricLoginError(.userCancelled, "the prompt was dismissed by the system: \(message)")
        case .userFallback?:
            return BiometricLoginError(.userFallback, message)
        case .biometryLockout?:
            return BiometricLoginError(.lockedOut, message)
        case .biometryNotEnrolled?:
            return BiometricLoginError(.notEnrolled, message)
        case .passcodeNotSet?:
            return BiometricLoginError(.passcodeNotSet, message)
        case .biometryNotAvailable?, .biometryNotPaired?, .biometryDisconnected?, .companionNotAvailable?:
            return BiometricLoginError(.notAvailable, message)
        case .authenticationFailed?:
            // Too many mismatches in one prompt; the OS counts towards lockout itself.
            return BiometricLoginError(.userFallback, "biometrics did not match: \(message)")
        case .invalidContext?, .notInteractive?, .invalidDimensions?, nil:
            return BiometricLoginError(.internalFailure, "LocalAuthentication error \(rawValue): \(message)")
        }
    }

    /// What `LAContext.canEvaluatePolicy` failing with this code means for availability.
    public static func availability(forLAErrorCode rawValue: Int) -> BiometryAvailability {
        switch LAErrorCode(rawValue: rawValue) {
        case .biometryNotEnrolled?: return .notEnrolled
        case .passcodeNotSet?: return .passcodeNotSet
        case .biometryLockout?: return .lockedOut
        default: return .notAvailable
        }
    }

    /// Security framework codes the key stores meet.
    public enum SecurityStatus: Int32, Sendable, CaseIterable {
        case itemNotFound = -25300
        case userCanceled = -128
        case authFailed = -25293
        case interactionNotAllowed = -25308
        case duplicateItem = -25299
    }

    /// The SDK error for a Keychain or Secure Enclave operation that failed with `status`.
    public static func error(forSecurityStatus status: Int32, operation: String) -> BiometricLoginError {
        switch SecurityStatus(rawValue: status) {
        case .itemNotFound?:
            return BiometricLoginError(.notEnabled, "\(operation): the device key does not exist")
        case .userCanceled?:
            return BiometricLoginError(.userCancelled, "\(operation): cancelled")
        case .authFailed?:
            // Returned when the key's access control can no longer be satisfied: its biometric set changed.
            return BiometricLoginError(.keyInvalidated, "\(operation): the key can no longer be used")
        case .interactionNotAllowed?:
            return BiometricLoginError(.notAvailable, "\(operation): the device is locked")
        case .duplicateItem?, nil:
            return BiometricLoginError(.internalFailure, "\(operation) failed with OSStatus \(status)")
        }
    }

    /// Whether the biometric enrolment changed since a key was made: `LAContext.evaluatedPolicyDomainState` then and
    /// now. A key with the `biometryCurrentSet` policy is void once it has; `nil` on either side means unknown.
    public static func biometryChanged(since enrolled: [UInt8]?, now current: [UInt8]?) -> Bool {
        guard let enrolled, let current else { return false }
        return enrolled != current
    }
}

extension PlatformErrorMapping {
    /// `ASAuthorizationError.Code` raw values (AuthenticationServices' `ASAuthorizationError.h`; 1000–1005 as in the
    /// iOS 16.5 SDK, `matchedExcludedCredential` from iOS 18).
    public enum ASAuthorizationErrorCode: Int, Sendable, CaseIterable {
        case unknown = 1000
        case canceled = 1001
        case invalidResponse = 1002
        case notHandled = 1003
        case failed = 1004
        case notInteractive = 1005
        case matchedExcludedCredential = 1006
    }

    /// The SDK error for a failed `ASAuthorizationController` request. A code this SDK does not know (a newer OS's)
    /// is `.unknown` with the number in the message.
    public static func passkeyError(forASAuthorizationErrorCode rawValue: Int, message: String) -> PasskeyError {
        switch ASAuthorizationErrorCode(rawValue: rawValue) {
        case .canceled?: return PasskeyError(.cancelled, message)
        case .invalidResponse?: return PasskeyError(.invalidResponse, message)
        case .notHandled?: return PasskeyError(.notHandled, message)
        case .failed?: return PasskeyError(.failed, message)
        case .notInteractive?: return PasskeyError(.notInteractive, message)
        case .matchedExcludedCredential?: return PasskeyError(.matchedExcludedCredential, message)
        case .unknown?: return PasskeyError(.unknown, message)
        case nil: return PasskeyError(.unknown, "ASAuthorizationError \(rawValue): \(message)")
        }
    }
}
