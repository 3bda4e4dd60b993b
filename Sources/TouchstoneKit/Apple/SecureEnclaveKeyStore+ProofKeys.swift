// Apple platforms only (CryptoKit's Secure Enclave, Security). Not built on Linux: the SDK core is tested there
// through the ProofKeyStore protocol with SoftwareKeyStore.
#if canImport(LocalAuthentication) && canImport(Security) && canImport(CryptoKit)
import CryptoKit
public import Foundation
import Security

/// The proof key (DPoP, issue #43): a P-256 key made in the Secure Enclave with no user-presence flag, usable while the
/// device is unlocked (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`), so every request can carry a proof without a
/// prompt while the key still never leaves this device. Without a Secure Enclave: a software key in the Keychain,
/// this device only.
extension SecureEnclaveKeyStore: ProofKeyStore {
    public func createProofKey(tag: String) async throws -> ProofKeyPublicKey {
        let account = Self.proofAccount(tag)
        guard !self.proofKeychain.exists(account: account) else {
            throw BiometricLoginError(.internalFailure, "a proof key with tag \(tag) already exists")
        }
        let blob: Data
        let publicKey: P256.Signing.PublicKey
        if self.usesSecureEnclave {
            var error: Unmanaged<CFError>?
            guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .privateKeyUsage, &error) else {
                throw BiometricLoginError(.internalFailure, "cannot protect the proof key: \(error?.takeRetainedValue().localizedDescription ?? "?")")
            }
            do {
                let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
                (blob, publicKey) = (key.dataRepresentation, key.publicKey)
            } catch {
                throw BiometricLoginError(.internalFailure, "the Secure Enclave refused to create the proof key: \(error)")
            }
        } else {
            let key = P256.Signing.PrivateKey()
            (blob, publicKey) = (key.rawRepresentation, key.publicKey)
        }
        try self.proofKeychain.store(blob, account: account, access: nil)
        return ProofKeyPublicKey(x963: [UInt8](publicKey.x963Representation))
    }

    public func proofKeyPublicKey(tag: String) async throws -> ProofKeyPublicKey? {
        guard self.proofKeychain.exists(account: Self.proofAccount(tag)) else { return nil }
        let blob = try self.proofKeychain.load(account: Self.proofAccount(tag), context: nil)
        if self.usesSecureEnclave {
            return ProofKeyPublicKey(x963: [UInt8](try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob).publicKey.x963Representation))
        }
        return ProofKeyPublicKey(x963: [UInt8](try P256.Signing.PrivateKey(rawRepresentation: blob).publicKey.x963Representation))
    }

    public func signWithProofKey(_ message: [UInt8], tag: String) async throws -> [UInt8] {
        let blob = try self.proofKeychain.load(account: Self.proofAccount(tag), context: nil)
        do {
            if self.usesSecureEnclave {
                return [UInt8](try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob).signature(for: Data(message)).rawRepresentation)
            }
            return [UInt8](try P256.Signing.PrivateKey(rawRepresentation: blob).signature(for: Data(message)).rawRepresentation)
        } catch {
            throw BiometricLoginError(.internalFailure, "the proof key cannot sign: \(error)")
        }
    }

    public func deleteProofKey(tag: String) async throws {
        self.proofKeychain.delete(account: Self.proofAccount(tag))
    }

    private static func proofAccount(_ tag: String) -> String { "\(tag).proof" }
}
#endif
