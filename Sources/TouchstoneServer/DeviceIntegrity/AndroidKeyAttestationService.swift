import Foundation
import Synchronization
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebAuthn

/// Android Keystore key attestation of device-key enrolments.
///
/// - The app asks for a challenge (`POST /v1/android-key-attestation/challenges`, with its session) and generates the
///   key with `setAttestationChallenge(<the challenge, base64url-decoded>)`.
/// - It sends the key's certificate chain as `keyAttestation` in `registrations/start`: the chain is verified (see
///   ``AndroidKeyAttestationVerifier``), its challenge must be one issued to this user, unused and unexpired, and the
///   registration records what the attestation established.
struct AndroidKeyAttestationService: Sendable {
    let store: any TouchstoneStore
    let secrets: Secrets
    let now: @Sendable () -> Date
    let challengeTTL: TimeInterval
    let apps: [AndroidApp]
    let trust: AndroidKeyAttestationTrust

    /// The most certificates `keyAttestation` may hold, and the size of each.
    static let maximumCertificateSize = 16 * 1024

    func requireEnabled() throws {
        guard !self.apps.isEmpty else { throw APIError.androidKeyAttestationDisabled }
    }

    /// A challenge for the user's next enrolment, or (`userId` nil) for a device-key sign-up, which has no user yet.
    func issueChallenge(userId: String?) async throws -> (challenge: String, expiresAt: Date) {
        try self.requireEnabled()
        return try await self.store.issueOneTimeChallenge(
            .androidKeyAttestation, userId: userId, secrets: self.secrets, now: self.now(), lifetime: self.challengeTTL)
    }

    /// Verifies the attestation chain of `key`, consumes its challenge (issued to `userId`, or for a sign-up when nil),
    /// and returns what to record.
    func verifyEnrolment(userId: String?, chain encodedChain: [String], key: DevicePublicKey) async throws
        -> KeyAttestationRecord
    {
        try self.requireEnabled()
        guard (1...AndroidKeyAttestationVerifier.maximumChainLength).contains(encodedChain.count) else {
            throw APIError.invalidRequest(
                "field 'keyAttestation' must hold 1 to \(AndroidKeyAttestationVerifier.maximumChainLength) certificates, leaf first"
            )
        }
        let chain = try encodedChain.map { try decodeBase64Field($0, field: "keyAttestation", maxLength: Self.maximumCertificateSize) }
        let statusList = try self.trust.statusList?.current() ?? .empty
        let verifier = AndroidKeyAttestationVerifier(
            apps: self.apps.map { .init(packageName: $0.packageName, signingCertificateSHA256: [$0.certificateSHA256]) },
            trustAnchors: self.trust.roots,
            statusList: statusList
        )
        let now = self.now()
        let attested: AndroidKeyAttestationVerifier.AttestedKey
        do {
            attested = try await verifier.verify(certificateChain: chain, publicKeySPKI: key.spkiDERRepresentation, at: now)
        } catch {
            throw APIError.invalidKeyAttestation(String(describing: error))
        }
        // The attestation challenge is a nonce this server issued to this user for an enrolment, used once.
        guard !attested.challenge.isEmpty,
            let record = try await self.store.consumeWebAuthnChallenge(
                Base64.urlEncode(attested.challenge),
                purpose: .androidKeyAttestation,
                at: now
            ),
            record.userId == userId
        else {
            throw APIError.challengeNotFound
        }
        guard now < record.expiresAt else { throw APIError.challengeExpired }
        return KeyAttestationRecord(securityLevel: attested.securityLevel.rawValue, packageName: attested.packageName)
    }
}

extension AndroidKeyAttestationService {
    /// Verifies the attestation chain of a phone's DPoP proof key (issue #43): trusted, not revoked, hardware-backed,
    /// generated for signing, the app's; no biometric needed (the proof key signs without the user). Its challenge is
    /// checked by the caller against the enrolment's.
    func verifyProofKey(chain encodedChain: [String], spki: [UInt8]) async throws -> AndroidKeyAttestationVerifier.AttestedKey {
        try self.requireEnabled()
        guard (1...AndroidKeyAttestationVerifier.maximumChainLength).contains(encodedChain.count) else {
            throw APIError.invalidKeyAttestation("proofKeyAttestation must hold 1 to \(AndroidKeyAttestationVerifier.maximumChainLength) certificates")
        }
        let chain = try encodedChain.map { try decodeBase64Field($0, field: "proofKeyAttestation", maxLength: Self.maximumCertificateSize) }
        let verifier = AndroidKeyAttestationVerifier(
            apps: self.apps.map { .init(packageName: $0.packageName, signingCertificateSHA256: [$0.certificateSHA256]) },
            trustAnchors: self.trust.roots,
            statusList: try self.trust.statusList?.current() ?? .empty
        )
        do {
            return try await verifier.verify(certificateChain: chain, publicKeySPKI: spki, at: self.now(), requireBiometric: false)
        } catch {
            throw APIError.invalidKeyAttestation("the proof key's attestation: \(error)")
        }
    }
}

/// A copy of Google's attestation status list on disk, read again whenever its size or modification time changes
/// (operators refresh it from https://android.googleapis.com/attestation/status, for instance hourly with cron).
///
/// Fails closed: while the file is missing or unreadable, enrolments with key attestation answer 503.
final class AttestationStatusFile: Sendable {
    let path: String
    private struct Loaded {
        var size: Int
        var modified: Date
        var list: AndroidAttestationStatusList
    }
    private let loaded = Mutex<Loaded?>(nil)

    /// Reads the file once, so a server with an unusable list does not start.
    init(path: String) throws {
        self.path = path
        _ = try self.read()
    }

    /// The list as the file holds it now.
    func current() throws -> AndroidAttestationStatusList {
        do {
            return try self.read()
        } catch {
            throw APIError.attestationStatusUnavailable
        }
    }

    private func read() throws -> AndroidAttestationStatusList {
        let attributes = try FileManager.default.attributesOfItem(atPath: self.path)
        let size = (attributes[.size] as? NSNumber)?.intValue ?? -1
        let modified = attributes[.modificationDate] as? Date ?? .distantPast
        if let cached = self.loaded.withLock({ $0 }), cached.size == size, cached.modified == modified {
            return cached.list
        }
        let list = try AndroidAttestationStatusList(json: Array(try Data(contentsOf: URL(fileURLWithPath: self.path))))
        self.loaded.withLock { $0 = Loaded(size: size, modified: modified, list: list) }
        return list
    }
}

/// Why the configured attestation status list cannot be used at startup.
struct AttestationStatusFileError: Error, CustomStringConvertible {
    var path: String
    var underlying: any Error

    var description: String { "cannot use the Android attestation status list \(self.path): \(self.underlying)" }
}
