// Apple platforms only (Security). Not built on Linux.
#if canImport(LocalAuthentication) && canImport(Security)
public import Foundation
import Security

/// The device credential in the Keychain: a generic-password item of this device only, readable after the first
/// unlock without a prompt (the app reads it when a push arrives, possibly in the background), never synchronised.
public struct KeychainDeviceCredentialStore: DeviceCredentialStore {
    private let service: String
    private static let account = "device-credential"

    /// - Parameter service: The Keychain service the item is kept under.
    public init(service: String = "touchstone.device-credential") {
        self.service = service
    }

    public func loadDeviceCredential(registrationId: String) async throws -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: self.service,
            kSecAttrAccount as String: Self.account,
            kSecReturnData as String: true,
        ]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else {
            throw PlatformErrorMapping.error(forSecurityStatus: status, operation: "read the device credential")
        }
        guard let stored = try? JSONDecoder().decode(StoredDeviceCredential.self, from: data), stored.registrationId == registrationId else {
            return nil
        }
        return stored.credential
    }

    public func saveDeviceCredential(_ credential: String, registrationId: String) async throws {
        try await self.clearDeviceCredential()
        let data = try JSONEncoder().encode(StoredDeviceCredential(registrationId: registrationId, credential: credential))
        let item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: self.service,
            kSecAttrAccount as String: Self.account,
            kSecAttrSynchronizable as String: false,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            kSecValueData as String: data,
        ]
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else {
            throw PlatformErrorMapping.error(forSecurityStatus: status, operation: "store the device credential")
        }
    }

    public func clearDeviceCredential() async throws {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: self.service,
            kSecAttrAccount as String: Self.account,
        ]
        SecItemDelete(query as CFDictionary)
    }
}
#endif
