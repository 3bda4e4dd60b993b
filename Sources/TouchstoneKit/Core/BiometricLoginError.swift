public import Foundation

/// The one error type of the SDK: every failure of ``BiometricLogin`` and ``TouchstoneClient`` is one of these.
///
/// A UI switches over ``code``:
///
/// ```swift
/// do {
///     let session = try await biometrics.login(reason: "Sign in to Example")
/// } catch let error as BiometricLoginError {
///     switch error.code {
///     case .userCancelled: break                       // stay on the screen
///     case .userFallback, .lockedOut: showPasswordForm()
///     case .registrationRevoked, .notEnabled: showPasswordForm(offerBiometricsAfterwards: true)
///     default: showAlert(error.message)
///     }
/// }
/// ```
public struct BiometricLoginError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for a UI to switch over.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// No biometric hardware, or the server does not allow biometric login.
        case notAvailable
        /// The device supports biometrics but none are enrolled (no fingerprint, no face).
        case notEnrolled
        /// The device has no passcode, so biometric keys cannot be protected.
        case passcodeNotSet
        /// Too many failed biometric attempts; the OS requires the passcode first.
        case lockedOut
        /// The user dismissed the prompt.
        case userCancelled
        /// The user chose the fallback button (for example "Use Password").
        case userFallback
        /// Biometric login is not enabled in this app on this device (never enabled, disabled, or the key is gone).
        case notEnabled
        /// Another account already uses biometric login on this device.
        case enabledForAnotherAccount
        /// The server revoked or replaced this device's registration; local state has been deleted.
        case registrationRevoked
        /// The device key can no longer be used: the biometric enrolment changed (a fingerprint or face was added or
        /// re-enrolled) and the OS invalidated the key. The server was told and local state has been deleted; sign
        /// in another way and enable biometric login again.
        case keyInvalidated
        /// Too many failed signatures: the server locked this registration. Sign in with the password, then unlock
        /// the device (or enable biometric login again).
        case registrationLocked
        /// The app PIN was wrong.
        case pinIncorrect
        /// Too many wrong PINs: the PIN works again after a password sign-in.
        case pinDisabled
        /// No app PIN is set for this device.
        case pinNotSet
        /// Too many requests or failed sign-ins; wait and try again.
        case rateLimited
        /// The session is over (signed out, revoked, expired or idle too long): sign in again.
        case sessionEnded
        /// The confirmation's payload does not say what the app asked to confirm (another id, summary or user): nothing
        /// was signed.
        case confirmationMismatch
        /// The confirmation is past its lifetime.
        case confirmationExpired
        /// The confirmation was already approved or declined.
        case confirmationNotPending
        /// The sign-in request is not what the app shows or expects (another account's, a number it did not offer, a
        /// QR code for another server): nothing was signed.
        case signInRequestMismatch
        /// The sign-in request is past its lifetime.
        case signInRequestExpired
        /// The sign-in request was already approved or declined.
        case signInRequestNotPending
        /// The number picked is not the one the computer shows: the request is declined (the user starts again on the
        /// computer).
        case wrongNumber
        /// No device credential is stored for this registration, or the server no longer accepts it: get a new one
        /// with ``BiometricLogin/renewDeviceCredential(session:)``.
        case deviceCredentialInvalid
        /// The server answered with an error; see ``serverCode`` and ``httpStatus``.
        case server
        /// The server could not be reached or answered something unreadable.
        case transport
        /// The key store or the prompt failed for another reason.
        case internalFailure
    }

    public let code: Code
    /// A human-readable explanation (not localised).
    public let message: String
    /// The API's error code (`invalid_signature`, `challenge_expired`...) when the server sent one.
    public let serverCode: String?
    /// The HTTP status when the server answered.
    public let httpStatus: Int?
    /// The server's clock when it answered (its `Date` header), for correcting this device's clock in DPoP proofs.
    public internal(set) var serverDate: Date?

    public init(_ code: Code, _ message: String, serverCode: String? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.serverCode = serverCode
        self.httpStatus = httpStatus
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code && lhs.serverCode == rhs.serverCode }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.code)
        hasher.combine(self.serverCode)
    }

    public var description: String {
        if let serverCode { return "\(self.code.rawValue) (\(serverCode)): \(self.message)" }
        return "\(self.code.rawValue): \(self.message)"
    }
}
