// Apple platforms only (CryptoKit's Secure Enclave, Security, LocalAuthentication). Not built on Linux: the SDK core
// it plugs into is tested there through the DeviceKeyStore protocol with SoftwareKeyStore.
#if canImport(LocalAuthentication) && canImport(Security) && canImport(CryptoKit)
import CryptoKit
public import Foundation
import LocalAuthentication
import Security
public import TouchstoneCrypto

/// ES256 device keys created inside the Secure Enclave, usable only after the access policy is satisfied (Face ID /
/// Touch ID of the current enrolment by default). The private key never exists outside the enclave: the Keychain
/// keeps only the enclave's wrapped blob, useless on any other device.
///
/// On a device without a Secure Enclave (some Macs, simulators) it falls back to a software P-256 key stored in the
/// Keychain under the same access control, and says so in ``usesSecureEnclave``.
public actor SecureEnclaveKeyStore: DeviceKeyStore {
    public nonisolated let supportedAlgorithms: [SignatureAlgorithm] = [.es256]
    /// Whether keys live in the Secure Enclave (`false`: the Keychain fallback).
    public nonisolated let usesSecureEnclave: Bool
    private let keychain: Keychain
    /// Where the proof keys' blobs are kept (readable without a prompt, this device only).
    let proofKeychain: Keychain

    public init(service: String = "touchstone.device-keys") {
        self.keychain = Keychain(service: service)
        self.proofKeychain = Keychain(service: service + ".proof", accessible: kSecAttrAccessibleWhenUnlockedThisDeviceOnly)
        self.usesSecureEnclave = SecureEnclave.isAvailable
    }

    /// What is kept beside a key, readable without a prompt: how to use it and the biometric state it was made in.
    private struct Metadata: Codable {
        var policy: KeyAccessPolicy
        var secureEnclave: Bool
        /// The biometric enrolment's state when the key was made (biometryCurrentSet keys die when it changes).
        var domainState: Data?
        /// Which API read it (`nil`: `evaluatedPolicyDomainState`, as before iOS 18).
        var domainStateSource: BiometryDomainState.Source?
        /// The Secure Enclave's wrapped key (`dataRepresentation`), when `secureEnclave`.
        var wrappedKey: Data?
    }

    public func createKey(tag: String, algorithm: SignatureAlgorithm, policy: KeyAccessPolicy) async throws -> DeviceKeyPublicKey {
        guard algorithm == .es256 else {
            throw BiometricLoginError(.notAvailable, "the Secure Enclave makes P-256 (ES256) keys only")
        }
        guard !self.keychain.exists(account: Self.metadataAccount(tag)) else {
            throw BiometricLoginError(.internalFailure, "a key with tag \(tag) already exists")
        }
        let domainState = BiometryDomainState.currentFromNewContext()
        let publicKey: P256.Signing.PublicKey
        if self.usesSecureEnclave {
            let access = try Keychain.accessControl(policy, privateKeyUsage: true)
            let key: SecureEnclave.P256.Signing.PrivateKey
            do {
                key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
            } catch {
                throw BiometricLoginError(.internalFailure, "the Secure Enclave refused to create a key: \(error)")
            }
            publicKey = key.publicKey
            let metadata = Metadata(
                policy: policy,
                secureEnclave: true,
                domainState: domainState?.0,
                domainStateSource: domainState?.1,
                wrappedKey: key.dataRepresentation
            )
            try self.keychain.store(try JSONEncoder().encode(metadata), account: Self.metadataAccount(tag), access: nil)
        } else {
            let key = P256.Signing.PrivateKey()
            publicKey = key.publicKey
            try self.keychain.store(key.rawRepresentation, account: tag, access: try Keychain.accessControl(policy, privateKeyUsage: false))
            let metadata = Metadata(
                policy: policy,
                secureEnclave: false,
                domainState: domainState?.0,
                domainStateSource: domainState?.1,
                wrappedKey: nil
            )
            try self.keychain.store(try JSONEncoder().encode(metadata), account: Self.metadataAccount(tag), access: nil)
        }
        return DeviceKeyPublicKey(algorithm: .es256, bytes: [UInt8](publicKey.x963Representation))
    }

    public func sign(_ message: [UInt8], withKey tag: String, verification: UserVerification) async throws -> [UInt8] {
        let metadata = try JSONDecoder().decode(Metadata.self, from: try self.keychain.load(account: Self.metadataAccount(tag), context: nil))
        let context = verification.laContext
        if metadata.policy == .biometryCurrentSet,
            BiometryDomainState.changed(since: metadata.domainState, source: metadata.domainStateSource, context: context)
        {
            throw BiometricLoginError(.keyInvalidated, "biometric enrolment changed since the key was made")
        }
        do {
            if metadata.secureEnclave, let wrapped = metadata.wrappedKey {
                let key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: wrapped, authenticationContext: context)
                return [UInt8](try key.signature(for: Data(message)).derRepresentation)
            }
            let raw = try self.keychain.load(account: tag, context: context)
            return [UInt8](try P256.Signing.PrivateKey(rawRepresentation: raw).signature(for: Data(message)).derRepresentation)
        } catch let error as BiometricLoginError {
            throw error
        } catch let error as LAError {
            throw PlatformErrorMapping.error(forLAErrorCode: error.code.rawValue, message: error.localizedDescription)
        } catch {
            // The enclave refuses a key whose access control can no longer be met (its biometric set is gone).
            throw BiometricLoginError(.keyInvalidated, "the Secure Enclave could not use the key: \(error)")
        }
    }

    public func deleteKey(tag: String) async throws {
        self.keychain.delete(account: tag)
        self.keychain.delete(account: Self.metadataAccount(tag))
    }

    public func keyExists(tag: String) async -> Bool {
        self.keychain.exists(account: Self.metadataAccount(tag))
    }

    private static func metadataAccount(_ tag: String) -> String { "\(tag).meta" }
}
#endif
