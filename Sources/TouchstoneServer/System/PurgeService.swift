import Foundation
import Logging
import ServiceLifecycle
import TouchstoneStore

/// Deletes expired challenges and sessions and abandoned registrations at a fixed interval until shutdown.
struct PurgeService: Service {
    let store: any TouchstoneStore
    let interval: Duration
    /// Audit events older than this are deleted too (`nil`: kept forever).
    let auditRetention: Duration?
    let now: @Sendable () -> Date
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let result = try await self.store.purgeExpired(before: self.now())
                if result.challenges + result.sessions + result.pendingRegistrations > 0 {
                    self.logger.debug(
                        "purged expired data",
                        metadata: [
                            "challenges": "\(result.challenges)", "sessions": "\(result.sessions)",
                            "pendingRegistrations": "\(result.pendingRegistrations)",
                        ]
                    )
                }
                if let retention = self.auditRetention {
                    let deleted = try await self.store.deleteAuditEvents(before: self.now().addingTimeInterval(-retention.timeInterval))
                    if deleted > 0 { self.logger.debug("deleted \(deleted) audit events past the retention limit") }
                }
            } catch {
                self.logger.warning("purge failed: \(error)")
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            } catch {
                return
            }
        }
    }
}

/// Closes the store when the application stops.
struct StoreService: Service {
    let store: any TouchstoneStore
    /// The SQLite file's lock, released once the store is closed.
    var fileLock: DatabaseFileLock? = nil

    func run() async throws {
        try? await gracefulShutdown()
        defer { self.fileLock?.release() }
        try await self.store.shutdown()
    }
}
