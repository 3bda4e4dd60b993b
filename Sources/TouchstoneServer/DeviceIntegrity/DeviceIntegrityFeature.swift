import Hummingbird

/// Apple App Attest (its challenge and key routes) and Android key attestation (used by device-key enrolment).
struct DeviceIntegrityFeature: Feature {
    let core: ServerCore
    let appAttest: AppAttestService
    let androidKeyAttestation: AndroidKeyAttestationService

    init(core: ServerCore, androidTrust: AndroidKeyAttestationTrust) {
        self.core = core
        self.appAttest = AppAttestService(
            store: core.store,
            secrets: core.secrets,
            now: core.now,
            settings: core.configuration.appAttest,
            challengeTTL: core.challengeTTL
        )
        self.androidKeyAttestation = AndroidKeyAttestationService(
            store: core.store,
            secrets: core.secrets,
            now: core.now,
            challengeTTL: core.challengeTTL,
            apps: core.configuration.passkeys.androidApps,
            trust: androidTrust
        )
    }

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        AppAttestController(service: self.appAttest, limiter: self.core.limiter).addRoutes(to: router)
    }
}
