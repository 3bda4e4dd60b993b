public import Crypto
import Foundation
public import Logging
import TouchstoneCrypto

/// Where the key-encryption key (which seals the token-signing keys at rest) comes from.
public enum KeyEncryptionKey {
    /// The key-encryption key for `configuration`:
    /// - the configured one (`TOUCHSTONE_KEY_ENCRYPTION_KEY` or `..._FILE`);
    /// - on SQLite in a file without one, the key in `<database>.kek` beside it, created (mode 0600) on first start;
    /// - on SQLite in memory, a random key (the keys it seals vanish with the database);
    /// - on PostgreSQL, none: a configured key is required, so that every instance opens the same key set.
    public static func resolve(
        _ configuration: TouchstoneConfiguration,
        randomBytes: @Sendable (Int) -> [UInt8],
        logger: Logger
    ) throws -> SymmetricKey {
        if let bytes = configuration.tokens.keyEncryptionKey { return SymmetricKey(data: bytes) }
        switch configuration.database {
        case .sqliteMemory:
            return SymmetricKey(data: randomBytes(32))
        case .postgres:
            throw KeyEncryptionKeyError(
                "TOUCHSTONE_KEY_ENCRYPTION_KEY (or TOUCHSTONE_KEY_ENCRYPTION_KEY_FILE) is required with PostgreSQL: every "
                    + "instance must seal and open the token-signing keys with the same key. Make one with "
                    + "`openssl rand -base64 32` and give the same value to every instance."
            )
        case .sqliteFile(let path):
            return try self.fileBeside(database: path, randomBytes: randomBytes, logger: logger)
        }
    }

    /// The path of the generated key file for an SQLite database.
    public static func defaultFile(database path: String) -> String { path + ".kek" }

    static func fileBeside(database path: String, randomBytes: @Sendable (Int) -> [UInt8], logger: Logger) throws -> SymmetricKey {
        let file = Self.defaultFile(database: path)
        if let text = try? String(contentsOfFile: file, encoding: .utf8) {
            do {
                return SymmetricKey(data: try TokenSettings.parseKeyEncryptionKey(text, setting: file))
            } catch {
                throw KeyEncryptionKeyError("the key-encryption key file \(file) does not hold 32 bytes in base64")
            }
        }
        let bytes = randomBytes(32)
        let text = Data(bytes).base64EncodedString() + "\n"
        // Created with mode 0600 before anything is written to it.
        guard FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: file)
        else {
            throw KeyEncryptionKeyError("the key-encryption key file \(file) cannot be created")
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
        try handle.synchronize()
        logger.notice(
            """
            created a key-encryption key for the token-signing keys in \(file) (mode 0600); in production set \
            TOUCHSTONE_KEY_ENCRYPTION_KEY or TOUCHSTONE_KEY_ENCRYPTION_KEY_FILE instead, and keep it apart from the database
            """
        )
        return SymmetricKey(data: bytes)
    }
}

/// The key-encryption key is missing, unreadable, or does not open the stored signing keys.
public struct KeyEncryptionKeyError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
