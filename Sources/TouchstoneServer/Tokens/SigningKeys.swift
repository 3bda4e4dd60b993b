import Foundation
public import Logging
public import TouchstoneStore

/// A signing key as the admin API and `touchstone keys list` show it (never its private part).
public struct SigningKeyInfo: Encodable, Sendable, Hashable {
    public var kid: String
    public var algorithm: String
    public var generation: Int64
    public var createdAt: String
    public var activatesAt: String
    /// `pending` (published, not signing yet), `active`, `retired` (no longer signing, published while its tokens may
    /// live) or `expired` (no longer published).
    public var status: String
    public var retiredAt: String?
    public var published: Bool

    /// Every key, newest first, with its state at `now`.
    static func list(_ keys: [SigningKeyRecord], schedule: SigningKeySchedule, now: Date) -> [SigningKeyInfo] {
        let active = schedule.active(keys, at: now)
        let published = Set(schedule.published(keys, at: now).map(\.kid))
        return keys.reversed().map { key in
            let retiredAt = schedule.retiredAt(key, among: keys, at: now)
            let status: String
            if key.kid == active?.kid {
                status = "active"
            } else if retiredAt == nil {
                status = "pending"
            } else {
                status = published.contains(key.kid) ? "retired" : "expired"
            }
            return SigningKeyInfo(
                kid: key.kid,
                algorithm: key.algorithm,
                generation: key.generation,
                createdAt: key.createdAt.rfc3339,
                activatesAt: key.activatesAt.rfc3339,
                status: status,
                retiredAt: retiredAt?.rfc3339,
                published: published.contains(key.kid)
            )
        }
    }
}

/// The signing key set for the CLI (`touchstone keys list|rotate`), with the server's configuration: the same
/// key-encryption key and schedule as `serve`.
public enum SigningKeys {
    /// Every key, newest first.
    public static func list(
        configuration: TouchstoneConfiguration,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        logger: Logger
    ) async throws -> [SigningKeyInfo] {
        let ring = try Self.ring(configuration, store, dependencies, logger)
        return SigningKeyInfo.list(try await ring.keys(fresh: true), schedule: ring.schedule, now: dependencies.now())
    }

    /// Makes a new key (see ``SigningKeyRing/rotate(immediately:actor:)``); audited as `signing_key.rotated`.
    public static func rotate(
        immediately: Bool,
        actor: String,
        configuration: TouchstoneConfiguration,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        logger: Logger
    ) async throws -> SigningKeyInfo {
        let ring = try Self.ring(configuration, store, dependencies, logger)
        try await ring.checkKeysOpen()
        let made = try await ring.rotate(immediately: immediately, actor: actor)
        let keys = SigningKeyInfo.list(try await ring.keys(), schedule: ring.schedule, now: dependencies.now())
        guard let info = keys.first(where: { $0.kid == made.kid }) else { throw StoreError.unavailable("the new key was not read back") }
        return info
    }

    static func ring(
        _ configuration: TouchstoneConfiguration,
        _ store: any TouchstoneStore,
        _ dependencies: TouchstoneDependencies,
        _ logger: Logger
    ) throws -> SigningKeyRing {
        let audit = AuditLog(store: store, secrets: Secrets(randomBytes: dependencies.randomBytes), now: dependencies.now, logger: logger)
        return SigningKeyRing(
            store: store,
            settings: configuration.tokens,
            keyEncryptionKey: try KeyEncryptionKey.resolve(configuration, randomBytes: dependencies.randomBytes, logger: logger),
            now: dependencies.now,
            audit: audit,
            logger: logger
        )
    }
}
