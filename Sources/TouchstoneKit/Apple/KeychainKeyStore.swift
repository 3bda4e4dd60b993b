// Apple platforms only (CryptoKit, Security, LocalAuthentication). Not built on Linux.
#if canImport(LocalAuthentication) && canImport(Security) && canImport(CryptoKit)
import CryptoKit
public import Foundation
import LocalAuthentication
import Security
public import TouchstoneCrypto

/// EdDSA (Ed25519) device keys kept as Keychain items under an access control (biometrics of the current set by
/// default), `WhenPasscodeSetThisDeviceOnly`, never synchronised. For apps that want EdDSA or run where there is no
/// Secure Enclave; the key is decrypted in the app's memory only for the signature, after the biometric check.
public actor KeychainKeyStore: DeviceKeyStore {
    public nonisolated let supportedAlgorithms: [SignatureAlgorithm] = [.eddsa]
    private let keychain: Keychain

    public init(service: String = "touchstone.device-keys") {
        self.keychain = Keychain(service: service)
    }

    private struct Metadata: Codable {
        var policy: KeyAccessPolicy
        var domainState: Data?
        /// Which API read it (`nil`: `evaluatedPolicyDomainState`, as before iOS 18).
        var domainStateSource: BiometryDomainState.Source?
    }

    public func createKey(tag: String, algorithm: SignatureAlgorithm, policy: KeyAccessPolicy) async throws -> DeviceKeyPublicKey {
        guard algorithm == .eddsa else { throw BiometricLoginError(.notAvailable, "KeychainKeyStore makes Ed25519 (EdDSA) keys") }
        guard !self.keychain.exists(account: "\(tag).meta") else {
            throw BiometricLoginError(.internalFailure, "a key with tag \(tag) already exists")
        }
        let key = Curve25519.Signing.PrivateKey()
        try self.keychain.store(key.rawRepresentation, account: tag, access: try Keychain.accessControl(policy, privateKeyUsage: false))
        let state = BiometryDomainState.currentFromNewContext()
        let metadata = Metadata(policy: policy, domainState: state?.0, domainStateSource: state?.1)
        try self.keychain.store(try JSONEncoder().encode(metadata), account: "\(tag).meta", access: nil)
        return DeviceKeyPublicKey(algorithm: .eddsa, bytes: [UInt8](key.publicKey.rawRepresentation))
    }

    public func sign(_ message: [UInt8], withKey tag: String, verification: UserVerification) async throws -> [UInt8] {
        let metadata = try JSONDecoder().decode(Metadata.self, from: try self.keychain.load(account: "\(tag).meta", context: nil))
        let context = verification.laContext
        if metadata.policy == .biometryCurrentSet,
            BiometryDomainState.changed(since: metadata.domainState, source: metadata.domainStateSource, context: context)
        {
            throw BiometricLoginError(.keyInvalidated, "biometric enrolment changed since the key was made")
        }
        let raw = try self.keychain.load(account: tag, context: context)
        do {
            return [UInt8](try Curve25519.Signing.PrivateKey(rawRepresentation: raw).signature(for: Data(message)))
        } catch {
            throw BiometricLoginError(.internalFailure, "signing failed: \(error)")
        }
    }

    public func deleteKey(tag: String) async throws {
        self.keychain.delete(account: tag)
        self.keychain.delete(account: "\(tag).meta")
    }

    public func keyExists(tag: String) async -> Bool {
        self.keychain.exists(account: "\(tag).meta")
    }
}
#endif
