import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
public import TouchstoneCrypto
import TouchstoneStore

/// The settings an operator can change while the server runs (`GET|PATCH /v1/admin/policy`). Stored in the database,
/// so every instance converges on the same policy; the configuration only supplies the defaults.
public struct RuntimePolicy: Sendable, Hashable, Codable {
    public var biometricsEnabled: Bool
    public var devicePolicy: DevicePolicy
    /// Algorithms accepted for new biometric registrations.
    public var algorithms: [SignatureAlgorithm]
    /// Consecutive failed signatures (or passkey assertions) that lock a registration (or passkey).
    public var lockoutThreshold: Int
    /// Wrong PINs that disable a registration's PIN until the next password sign-in.
    public var pinMaxAttempts: Int
    public var sessionLifetimeMinutes: Int
    public var sessionIdleMinutes: Int

    init(configuration: TouchstoneConfiguration) {
        self.biometricsEnabled = configuration.biometricsEnabled
        self.devicePolicy = configuration.devicePolicy
        self.algorithms = configuration.algorithms
        self.lockoutThreshold = configuration.lockoutThreshold
        self.pinMaxAttempts = configuration.pinMaxAttempts
        self.sessionLifetimeMinutes = max(1, Int(configuration.sessionLifetime.components.seconds / 60))
        self.sessionIdleMinutes = max(1, Int(configuration.sessionIdleTimeout.components.seconds / 60))
    }

    var sessionLifetime: TimeInterval { TimeInterval(self.sessionLifetimeMinutes) * 60 }
    var sessionIdleTimeout: TimeInterval { TimeInterval(self.sessionIdleMinutes) * 60 }

    /// The first rule this policy breaks, as a message naming the field.
    func validationError() -> String? {
        if self.algorithms.isEmpty { return "field 'algorithms' must name at least one algorithm" }
        if !(1...100).contains(self.lockoutThreshold) { return "field 'lockoutThreshold' must be between 1 and 100" }
        if !(1...10).contains(self.pinMaxAttempts) { return "field 'pinMaxAttempts' must be between 1 and 10" }
        if !(1...525_600).contains(self.sessionLifetimeMinutes) {
            return "field 'sessionLifetimeMinutes' must be between 1 and 525600"
        }
        if !(1...self.sessionLifetimeMinutes).contains(self.sessionIdleMinutes) {
            return "field 'sessionIdleMinutes' must be between 1 and sessionLifetimeMinutes"
        }
        return nil
    }
}

/// The current ``RuntimePolicy`` of this instance: read on every request, reloaded from the database periodically
/// (see ``PolicyRefreshService``) and at once when this instance changes it.
final class PolicyProvider: Sendable {
    static let settingName = "policy"

    private let state: NIOLockedValueBox<RuntimePolicy>
    let defaults: RuntimePolicy

    init(defaults: RuntimePolicy) {
        self.defaults = defaults
        self.state = NIOLockedValueBox(defaults)
    }

    var current: RuntimePolicy { self.state.withLockedValue { $0 } }

    /// Reads the stored policy (the defaults when none was ever stored, or when it cannot be read).
    func reload(from store: any SettingStore, logger: Logger) async {
        do {
            guard let text = try await store.setting(name: Self.settingName) else { return }
            let stored = try JSONDecoder().decode(RuntimePolicy.self, from: Data(text.utf8))
            self.state.withLockedValue { $0 = stored }
        } catch {
            logger.warning("runtime policy could not be loaded; keeping the current one: \(error)")
        }
    }

    /// Validates, stores and applies a new policy.
    func save(_ policy: RuntimePolicy, to store: any SettingStore, at now: Date) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(policy), as: UTF8.self)
        try await store.saveSetting(name: Self.settingName, value: text, at: now)
        self.state.withLockedValue { $0 = policy }
    }
}
