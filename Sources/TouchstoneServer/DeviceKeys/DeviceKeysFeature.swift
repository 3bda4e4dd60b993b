import Hummingbird
import TouchstoneCrypto

/// Biometric device keys: enrolment (with the device-integrity proofs), sign-in, listing, revocation, unlocking,
/// invalidation, and the PIN routes of a registration.
struct DeviceKeysFeature: Feature {
    let core: ServerCore
    let service: BiometricService
    let integrity: DeviceIntegrityFeature
    let pins: PinService

    init(core: ServerCore, challenges: SelfContainedChallenges, integrity: DeviceIntegrityFeature, pins: PinService) {
        self.core = core
        self.integrity = integrity
        self.pins = pins
        self.service = BiometricService(
            store: core.store,
            sessions: core.sessions,
            secrets: core.secrets,
            keys: DevicePublicKeyCache(capacity: core.configuration.keyCacheSize),
            signers: ParsedValueCache(capacity: core.configuration.keyCacheSize),
            challenges: challenges,
            now: core.now,
            configuration: core.configuration,
            policy: core.policy,
            audit: core.audit
        )
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        let configuration = self.core.configuration
        BiometricRegistrationController(
            service: self.service,
            appAttest: self.integrity.appAttest,
            requireAppAttest: configuration.appAttest.required,
            androidKeyAttestation: self.integrity.androidKeyAttestation,
            requireAndroidKeyAttestation: configuration.androidKeyAttestation.required,
            store: self.core.store,
            pins: self.pins,
            limiter: self.core.limiter,
            audit: self.core.audit
        ).addRoutes(to: router, authenticator: self.core.authenticator)
        BiometricAuthenticationController(service: self.service, limiter: self.core.limiter, audit: self.core.audit).addRoutes(to: router)
    }
}
