// Apple platforms only (Security, LocalAuthentication). Not built on Linux.
#if canImport(LocalAuthentication) && canImport(Security)
import Foundation
import LocalAuthentication
import Security

/// Generic-password items of one service: what the Apple key stores keep, never synchronised, this device only.
struct Keychain: @unchecked Sendable {
    let service: String
    /// Items stored without access control get this class (a `CFString` constant; never mutated).
    let accessible: CFString

    init(service: String, accessible: CFString = kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly) {
        self.service = service
        self.accessible = accessible
    }

    /// The access control for a key policy; `WhenPasscodeSetThisDeviceOnly`, so items vanish with the passcode.
    static func accessControl(_ policy: KeyAccessPolicy, privateKeyUsage: Bool) throws -> SecAccessControl {
        var flags: SecAccessControlCreateFlags
        switch policy {
        case .biometryCurrentSet: flags = .biometryCurrentSet
        case .biometryAny: flags = .biometryAny
        case .userPresence: flags = .userPresence
        }
        if privateKeyUsage { flags.insert(.privateKeyUsage) }
        var error: Unmanaged<CFError>?
        guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, flags, &error) else {
            throw BiometricLoginError(.passcodeNotSet, "cannot protect the key: \(error?.takeRetainedValue().localizedDescription ?? "no passcode")")
        }
        return access
    }

    /// Stores `data` under `account`; `access` protects reading it (nil: readable without a prompt, as for a Secure
    /// Enclave key blob, which is useless off this device).
    func store(_ data: Data, account: String, access: SecAccessControl?) throws {
        var item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: self.service,
            kSecAttrAccount as String: account,
            kSecAttrSynchronizable as String: false,
            kSecValueData as String: data,
        ]
        if let access {
            item[kSecAttrAccessControl as String] = access
        } else {
            item[kSecAttrAccessible as String] = self.accessible
        }
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { throw PlatformErrorMapping.error(forSecurityStatus: status, operation: "store key") }
    }

    /// Reads the item, authenticating with `context` (already evaluated: no second prompt).
    func load(account: String, context: LAContext?) throws -> Data {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: self.service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: true,
        ]
        if let context { query[kSecUseAuthenticationContext as String] = context }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess, let data = result as? Data else {
            throw PlatformErrorMapping.error(forSecurityStatus: status, operation: "read key")
        }
        return data
    }

    /// Whether the item exists, without reading it (never prompts).
    func exists(account: String) -> Bool {
        let context = LAContext()
        context.interactionNotAllowed = true
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: self.service,
            kSecAttrAccount as String: account,
            kSecUseAuthenticationContext as String: context,
        ]
        let status = SecItemCopyMatching(query as CFDictionary, nil)
        // A protected item answers "interaction not allowed" rather than showing a prompt: it exists.
        return status == errSecSuccess || status == errSecInteractionNotAllowed
    }

    func delete(account: String) {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: self.service,
            kSecAttrAccount as String: account,
        ]
        SecItemDelete(query as CFDictionary)
    }
}
#endif
