import Crypto
import Logging
import TouchstoneCrypto
import TouchstoneStore

/// The key of the decoy credential ids, shared by every instance through the database (created by the first).
/// Without a database (it is down at start) a random key serves this process: its decoys then differ from the other
/// instances' until a restart, which only weakens the decoys.
func loadDecoyKey(store: any SettingStore, dependencies: TouchstoneDependencies, logger: Logger) async -> SymmetricKey {
    let name = "decoy_credential_key"
    do {
        if let stored = try await store.setting(name: name), let bytes = Base64.decode(stored), bytes.count == 32 {
            return SymmetricKey(data: bytes)
        }
        _ = try await store.insertSetting(name: name, value: Base64.urlEncode(dependencies.randomBytes(32)), at: dependencies.now())
        // Another instance may have stored its own first: everyone uses the one stored.
        if let stored = try await store.setting(name: name), let bytes = Base64.decode(stored), bytes.count == 32 {
            return SymmetricKey(data: bytes)
        }
    } catch {
        logger.warning("decoy credential key could not be loaded: \(error)")
    }
    return SymmetricKey(data: dependencies.randomBytes(32))
}
