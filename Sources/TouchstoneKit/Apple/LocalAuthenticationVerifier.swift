// Apple platforms only (LocalAuthentication). Not built on Linux: the logic it relies on (error mapping) lives in
// Core/PlatformErrorMapping.swift, where the Linux tests cover it.
#if canImport(LocalAuthentication) && canImport(Security)
public import Foundation
public import LocalAuthentication

/// The biometric prompt: `LAContext.evaluatePolicy`. The evaluated context travels to the key store in the
/// ``UserVerification``, so signing uses it and the user is asked once.
public struct LocalAuthenticationVerifier: UserVerifier {
    /// The button shown after a failed match (`nil`: the system's; `""`: none).
    public var fallbackTitle: String?
    public var cancelTitle: String?
    /// `.deviceOwnerAuthenticationWithBiometrics` (default), or `.deviceOwnerAuthentication` to allow the passcode.
    public var policy: LAPolicy

    public init(fallbackTitle: String? = nil, cancelTitle: String? = nil, policy: LAPolicy = .deviceOwnerAuthenticationWithBiometrics) {
        self.fallbackTitle = fallbackTitle
        self.cancelTitle = cancelTitle
        self.policy = policy
    }

    public func availability() async -> BiometryAvailability {
        let context = LAContext()
        var error: NSError?
        guard context.canEvaluatePolicy(self.policy, error: &error) else {
            return PlatformErrorMapping.availability(forLAErrorCode: error?.code ?? LAError.Code.biometryNotAvailable.rawValue)
        }
        switch context.biometryType {
        case .faceID: return .available(.faceID)
        case .touchID: return .available(.touchID)
        case .opticID: return .available(.opticID)
        default: return .notAvailable
        }
    }

    public func verifyUser(reason: String) async throws -> UserVerification {
        let context = LAContext()
        context.localizedFallbackTitle = self.fallbackTitle
        context.localizedCancelTitle = self.cancelTitle
        do {
            _ = try await context.evaluatePolicy(self.policy, localizedReason: reason)
        } catch let error as LAError {
            throw PlatformErrorMapping.error(forLAErrorCode: error.code.rawValue, message: error.localizedDescription)
        } catch {
            throw BiometricLoginError(.internalFailure, "LocalAuthentication: \(error)")
        }
        return UserVerification(verifiedAt: Date(), context: EvaluatedContext(context))
    }
}

/// An evaluated `LAContext`, handed from the verifier to the key store. `LAContext` is thread-safe for these uses
/// but not marked `Sendable`.
public struct EvaluatedContext: @unchecked Sendable {
    public let context: LAContext

    public init(_ context: LAContext) {
        self.context = context
    }
}

extension UserVerification {
    /// The `LAContext` the ``LocalAuthenticationVerifier`` evaluated, if this verification came from it.
    var laContext: LAContext? { (self.context as? EvaluatedContext)?.context }
}
#endif
