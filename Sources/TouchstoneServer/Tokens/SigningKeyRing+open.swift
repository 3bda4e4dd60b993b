import Crypto
import Logging
import TouchstoneStore

/// The token-signing key set: its key-encryption key resolved, the keys the schedule says are due made, and every
/// stored key checked to open with the key-encryption key (a server with the wrong key refuses to start). A database
/// that does not answer now is left to the rotation service and the first token request.
func openSigningKeyRing(
    configuration: TouchstoneConfiguration,
    keyEncryptionKey: SymmetricKey,
    dependencies: TouchstoneDependencies,
    store: any TouchstoneStore,
    audit: AuditLog,
    logger: Logger
) async throws -> SigningKeyRing {
    let ring = SigningKeyRing(
        store: store,
        settings: configuration.tokens,
        keyEncryptionKey: keyEncryptionKey,
        now: dependencies.now,
        audit: audit,
        logger: logger
    )
    do {
        try await ring.checkKeysOpen()
        try await ring.maintain()
    } catch let error as KeyEncryptionKeyError {
        throw error
    } catch {
        logger.warning("token signing keys not loaded at start (the database did not answer): \(error)")
    }
    return ring
}
