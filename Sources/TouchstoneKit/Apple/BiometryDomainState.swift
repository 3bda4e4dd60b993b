// Apple platforms only (LocalAuthentication). Not built on Linux.
#if canImport(LocalAuthentication)
import Foundation
import LocalAuthentication

/// The biometric enrolment's fingerprint, from the API the OS has: `LAContext.domainState.biometry.stateHash` (iOS 18,
/// macOS 15) or `LAContext.evaluatedPolicyDomainState` (deprecated there). A stored value is compared only with a value
/// read through the same API (``Source``), so updating the OS never looks like a changed enrolment.
enum BiometryDomainState {
    /// Which API a stored value came from.
    enum Source: String, Codable, Sendable {
        case evaluatedPolicyDomainState
        case biometryStateHash
    }

    /// The current value and its source, read from a context that has evaluated (or can evaluate) biometrics.
    static func current(_ context: LAContext) -> (Data, Source)? {
        if #available(iOS 18.0, macOS 15.0, visionOS 2.0, *) {
            let hash: Data? = context.domainState.biometry.stateHash
            return hash.map { ($0, Source.biometryStateHash) }
        }
        return Self.legacy(context).map { ($0, .evaluatedPolicyDomainState) }
    }

    /// The current value read through `source`'s API (`nil` when this OS does not have it or biometrics are off).
    static func current(_ context: LAContext, from source: Source) -> Data? {
        switch source {
        case .evaluatedPolicyDomainState:
            return Self.legacy(context)
        case .biometryStateHash:
            if #available(iOS 18.0, macOS 15.0, visionOS 2.0, *) { return context.domainState.biometry.stateHash }
            return nil
        }
    }

    /// The state now, from a fresh context (nil when biometrics cannot be evaluated).
    static func currentFromNewContext() -> (Data, Source)? {
        let context = LAContext()
        var error: NSError?
        guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else { return nil }
        return Self.current(context)
    }

    @available(iOS, deprecated: 18.0)
    @available(macOS, deprecated: 15.0)
    private static func legacy(_ context: LAContext) -> Data? { context.evaluatedPolicyDomainState }

    /// Whether the enrolment changed since `stored` (read through `source`, `nil` meaning the older API, as metadata
    /// written before this type existed).
    static func changed(since stored: Data?, source: Source?, context: LAContext?) -> Bool {
        guard let context else { return false }
        let now = Self.current(context, from: source ?? .evaluatedPolicyDomainState)
        return PlatformErrorMapping.biometryChanged(since: stored.map { [UInt8]($0) }, now: now.map { [UInt8]($0) })
    }
}
#endif
