import Foundation
import TouchstoneWebAuthn
import X509

/// The WebAuthn relying party from the settings: origins default to `http://localhost:<port>`; trust anchors are read
/// from their PEM files.
func makeRelyingParty(_ configuration: TouchstoneConfiguration) throws -> RelyingParty {
    let settings = configuration.passkeys
    let origins = (settings.origins.isEmpty ? ["http://localhost:\(configuration.port)"] : settings.origins) + settings.relatedOrigins
        + settings.androidApps.map(\.origin)
    var relyingParty = RelyingParty(id: settings.rpId, name: settings.rpName, origins: origins)
    relyingParty.allowCrossOrigin = settings.allowCrossOrigin
    relyingParty.allowedTopOrigins = settings.allowedTopOrigins
    relyingParty.userVerification = settings.userVerification
    relyingParty.algorithms = settings.algorithms
    relyingParty.minimumAttestation = settings.minimumAttestation
    relyingParty.rejectCounterRegression = settings.rejectCounterRegression
    relyingParty.refusedStatuses = configuration.metadata.refusedStatuses
    relyingParty.requireCertifiedAuthenticators = configuration.metadata.requireCertified
    relyingParty.trustAnchors = try settings.trustAnchorFiles.flatMap { path -> [Certificate] in
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("trust anchor file", path)
        }
        guard let certificates = RelyingParty.trustAnchors(pem: text) else {
            throw ConfigurationError("trust anchor file (not PEM certificates)", path)
        }
        return certificates
    }
    return relyingParty
}
