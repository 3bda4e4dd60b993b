public import Foundation

/// A ``UserVerifier`` without hardware: approves every prompt (the CLI's simulated device), or plays back scripted
/// outcomes so tests can exercise cancellations, fallbacks and lockouts.
public actor ScriptedVerifier: UserVerifier {
    /// What the next prompt does.
    public enum Outcome: Sendable {
        case approve
        case fail(BiometricLoginError.Code)
    }

    private var deviceAvailability: BiometryAvailability
    private var queued: [Outcome]
    /// How many prompts were shown.
    public private(set) var promptCount = 0
    /// The reasons shown, in order.
    public private(set) var reasons: [String] = []

    /// - Parameters:
    ///   - availability: What ``availability()`` reports.
    ///   - outcomes: Outcomes for the next prompts, in order; once exhausted, every prompt is approved.
    public init(availability: BiometryAvailability = .available(.simulated), outcomes: [Outcome] = []) {
        self.deviceAvailability = availability
        self.queued = outcomes
    }

    /// Approves every prompt.
    public static func alwaysApprove() -> ScriptedVerifier { ScriptedVerifier() }

    public func setAvailability(_ availability: BiometryAvailability) { self.deviceAvailability = availability }
    public func enqueue(_ outcome: Outcome) { self.queued.append(outcome) }

    public func availability() async -> BiometryAvailability { self.deviceAvailability }

    public func verifyUser(reason: String) async throws -> UserVerification {
        self.promptCount += 1
        self.reasons.append(reason)
        let outcome = self.queued.isEmpty ? .approve : self.queued.removeFirst()
        switch outcome {
        case .approve:
            return UserVerification(verifiedAt: Date())
        case .fail(let code):
            throw BiometricLoginError(code, "simulated prompt outcome: \(code.rawValue)")
        }
    }
}
