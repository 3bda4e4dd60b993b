public import Foundation
public import TouchstoneStore
import Logging

/// Client addresses refused on the credential routes after too many failed password or PIN checks
/// (``RateLimitSettings/failedCredentialsPerAddress``): what the admin API and `touchstone admin` list and clear.
public enum BlockedAddresses {
    /// The addresses blocked now, the latest block first.
    public static func list(store: any TouchstoneStore, dependencies: TouchstoneDependencies = .live, limit: Int = 1000)
        async throws -> [AddressFailures]
    {
        try await store.blockedAddresses(at: dependencies.now(), limit: limit)
    }

    /// Clears an address's failures and block, recording `address.unblocked` (with `actor`, who did it) when it was
    /// blocked. Returns whether it was.
    public static func unblock(
        _ address: String,
        actor: String,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live
    ) async throws -> Bool {
        let audit = AuditLog(
            store: store,
            secrets: Secrets(randomBytes: dependencies.randomBytes),
            now: dependencies.now,
            logger: Logger(label: "touchstone.audit")
        )
        return try await self.unblock(address, actor: actor, store: store, audit: audit)
    }

    static func unblock(_ address: String, actor: String, store: any TouchstoneStore, audit: AuditLog) async throws -> Bool {
        guard try await store.clearAddressFailures(address: address, at: audit.now()) else { return false }
        try await audit.record(.addressUnblocked, .info, reason: "\(address) by \(actor)")
        return true
    }
}
