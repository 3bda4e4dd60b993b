import Foundation
import TouchstoneCrypto
import TouchstoneStore

/// The device-integrity proof of a new device key, as enrolment and device-key sign-up take it: App Attest (iOS) or
/// Android key attestation, not both, and whichever the server requires.
struct EnrolmentIntegrity: Sendable {
    let appAttest: AppAttestService
    let androidKeyAttestation: AndroidKeyAttestationService
    let requireAppAttest: Bool
    let requireAndroidKeyAttestation: Bool

    /// What the proof established: the App Attest key that vouched for the enrolment now, and the key attestation to
    /// check once the key is parsed (its challenge issued to `userId`, or for a sign-up when nil).
    struct Checked: Sendable {
        var appAttestKeyId: String?
        var attestKey: (@Sendable (DevicePublicKey) async throws -> KeyAttestationRecord)?
    }

    /// - Throws: 400 `invalid_request` (both proofs), the App Attest errors, 403 `app_attest_required`,
    ///   `android_key_attestation_required`, `device_attestation_required`.
    func check(appAttest proof: AppAttestProof?, keyAttestation chain: [String]?, publicKey: String, userId: String?) async throws -> Checked {
        switch (proof, chain) {
        case (.some, .some):
            throw APIError.invalidRequest("send 'appAttest' (iOS) or 'keyAttestation' (Android), not both")
        case (.some(let proof), nil):
            let keyId = try await self.appAttest.verifyEnrolment(
                keyId: proof.keyId, challenge: proof.challenge, assertion: proof.assertion, publicKey: publicKey)
            return Checked(appAttestKeyId: keyId)
        case (nil, .some(let chain)):
            let service = self.androidKeyAttestation
            return Checked(attestKey: { key in try await service.verifyEnrolment(userId: userId, chain: chain, key: key) })
        case (nil, nil):
            // Either required kind of proof will do: an iOS device cannot send the Android one, nor the reverse.
            switch (self.requireAppAttest, self.requireAndroidKeyAttestation) {
            case (true, true): throw APIError.deviceAttestationRequired
            case (true, false): throw APIError.appAttestRequired
            case (false, true): throw APIError.androidKeyAttestationRequired
            case (false, false): return Checked()
            }
        }
    }
}
