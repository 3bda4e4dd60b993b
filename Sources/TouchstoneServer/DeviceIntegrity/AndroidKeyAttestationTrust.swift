import Foundation
import TouchstoneWebAuthn
import X509

/// What Android key attestation trusts, from the settings: the roots file (if any) replaces Google's roots, and the
/// status list file must be readable now.
struct AndroidKeyAttestationTrust: Sendable {
    var roots: [Certificate]
    var statusList: AttestationStatusFile?

    init(_ settings: AndroidKeyAttestationSettings) throws {
        self.roots = settings.trustAnchors
        if let path = settings.rootsFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError("TOUCHSTONE_ANDROID_ATTESTATION_ROOTS", path)
            }
            guard let certificates = RelyingParty.trustAnchors(pem: text) else {
                throw ConfigurationError("TOUCHSTONE_ANDROID_ATTESTATION_ROOTS (not PEM certificates)", path)
            }
            self.roots = certificates
        }
        self.statusList = try settings.statusFile.map { path in
            do {
                return try AttestationStatusFile(path: path)
            } catch {
                throw AttestationStatusFileError(path: path, underlying: error)
            }
        }
    }
}
